import type { SchedulerTickResult, SchedulerTickerOptions } from './types.js';
import { DEFAULT_TICKER_INTERVAL_MS, MAX_TIMER_MS } from '../defaults.js';
import { assertFunction, assertInt, assertOptions } from '../validate.js';

/** What a ticker needs of a queue. */
export interface SchedulerTickable {
  runSchedulers(): Promise<SchedulerTickResult>;
}

/** Never tick again sooner than this: a scheduler that cannot move on must not spin. */
const MIN_WAIT_MS = 5;

/**
 * Runs `queue.runSchedulers()` for as long as it is started: right after each slot comes due
 * (the tick says when, in Redis time), and at least every `maxIntervalMs` to see schedulers
 * that other processes upserted. Many tickers on one queue are safe: each slot is written by
 * one of them (a compare-and-set in Redis). Its timer never keeps the process alive.
 */
export class SchedulerTicker {
  readonly #queue: SchedulerTickable;
  readonly #maxIntervalMs: number;
  readonly #onError: (err: unknown) => void;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> | undefined;
  #running = false;
  #last: SchedulerTickResult | null = null;
  #lastError: unknown = null;

  constructor(queue: SchedulerTickable, options: SchedulerTickerOptions = {}) {
    assertOptions('scheduler ticker options', options, ['maxIntervalMs', 'onError']);
    if (options.maxIntervalMs !== undefined) assertInt('maxIntervalMs', options.maxIntervalMs, { min: 10, max: MAX_TIMER_MS });
    if (options.onError !== undefined) assertFunction('onError', options.onError);
    this.#queue = queue;
    this.#maxIntervalMs = options.maxIntervalMs ?? DEFAULT_TICKER_INTERVAL_MS;
    this.#onError = options.onError ?? (() => undefined);
  }

  /** Starts ticking (the first tick at once). Idempotent. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#schedule(0);
  }

  /** Stops ticking and waits for a tick in flight. */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#inFlight;
  }

  get running(): boolean {
    return this.#running;
  }

  /** The last tick that succeeded (null before the first). */
  get lastResult(): SchedulerTickResult | null {
    return this.#last;
  }

  /** The error of the last tick if it failed, else null. */
  get lastError(): unknown {
    return this.#lastError;
  }

  #schedule(delay: number): void {
    if (!this.#running) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#inFlight = this.#tick().finally(() => (this.#inFlight = undefined));
    }, delay);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    let wait = this.#maxIntervalMs;
    try {
      const r = await this.#queue.runSchedulers();
      this.#last = r;
      this.#lastError = null;
      // Both times are Redis's: the wait does not depend on this machine's clock.
      if (r.nextDueAt !== null) wait = Math.min(wait, Math.max(MIN_WAIT_MS, r.nextDueAt - r.now + 1));
    } catch (err) {
      this.#lastError = err;
      try {
        this.#onError(err);
      } catch {
        // a throwing error handler must not stop the ticker
      }
    }
    this.#schedule(wait);
  }
}
