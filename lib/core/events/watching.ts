import { Observable, distinctUntilChanged, filter, firstValueFrom, take, timeout as rxTimeout } from 'rxjs';
import { DEFAULT_WAIT_TIMEOUT_MS, MAX_TIMER_MS } from '../defaults.js';
import { ClosedError, JobFailedError, TimeoutError } from '../errors.js';
import type { QueueEvent } from './types.js';
import type { JobInfo, JobState } from '../management/read-types.js';
import { assertInt, assertJobId, assertOptions } from '../validate.js';
import type { EventHub } from './event-hub.js';

const TERMINAL: ReadonlySet<JobState | 'gone'> = new Set(['completed', 'dead', 'gone']);

/** Following one job through the event stream: its states, or its result. */
export class Watching<Data, Result> {
  constructor(
    private readonly queue: string,
    private readonly hub: EventHub,
    private readonly getJob: (id: string) => Promise<JobInfo<Data, Result> | null>,
  ) {}

  /** The states of one job, starting with its current one, until it completes, dies or vanishes. */
  watch(id: string): Observable<JobState | 'gone'> {
    assertJobId(id, 'id'); // before anything subscribes or announces a listener
    return new Observable<JobState | 'gone'>((subscriber) => {
      let done = false;
      const emit = (s: JobState | 'gone') => {
        if (done) return;
        subscriber.next(s);
        if (TERMINAL.has(s)) {
          done = true;
          subscriber.complete();
        }
      };
      const sub = this.hub.events$.pipe(filter((e) => e.id === id)).subscribe({
        next: (e) => {
          const s = stateAfter(e);
          if (s) emit(s);
        },
        error: (err: unknown) => subscriber.error(err),
        // The event stream ends only when this queue object is closed.
        complete: () => {
          if (!done) subscriber.error(new ClosedError(`queue '${this.queue}'`));
        },
      });
      const readState = () =>
        this.getJob(id)
          .then((info) => emit(info ? info.state : 'gone'))
          .catch((err: unknown) => subscriber.error(err));
      // transitions published while the subscription was down were missed: read the state again
      const again = this.hub.resubscribed$.subscribe(() => void readState());
      this.hub.open().then(readState, (err: unknown) => subscriber.error(err));
      return () => {
        sub.unsubscribe();
        again.unsubscribe();
      };
    }).pipe(distinctUntilChanged());
  }

  /** Resolves with the job's result once it completes (needs keepCompletedMs > 0). */
  async waitForResult(id: string, opts: { timeoutMs?: number }): Promise<Result | undefined> {
    assertJobId(id, 'id');
    assertOptions('waitForResult options', opts, ['timeoutMs']);
    const timeoutMs = opts.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
    assertInt('timeoutMs', timeoutMs, { min: 1, max: MAX_TIMER_MS });
    let end: JobState | 'gone';
    try {
      end = await firstValueFrom(
        this.watch(id).pipe(
          filter((s) => TERMINAL.has(s)),
          take(1),
          rxTimeout({ first: timeoutMs }),
        ),
      );
    } catch (err) {
      if (err instanceof Error && err.name === 'TimeoutError') {
        // An event lost during a reconnect must not turn a finished job into a timeout.
        const last = await this.getJob(id);
        if (last?.state === 'completed') return last.result;
        if (last?.state === 'dead') throw new JobFailedError(id, last.lastError ?? 'dead-lettered');
        throw new TimeoutError(`job ${id} did not finish within ${timeoutMs} ms`);
      }
      throw err;
    }
    const info = await this.getJob(id);
    if (end === 'completed' || info?.state === 'completed') return info?.result;
    if (info?.state === 'dead') throw new JobFailedError(id, info.lastError ?? 'dead-lettered');
    throw new JobFailedError(id, 'the job no longer exists (removed, or completed with keepCompletedMs 0)');
  }
}

function stateAfter(e: QueueEvent): JobState | 'gone' | undefined {
  switch (e.type) {
    case 'added':
    case 'promoted':
    case 'stalled':
      return 'pending';
    case 'leased':
      return 'working';
    case 'completed':
      return 'completed';
    case 'dead':
      return 'dead';
    case 'waiting-children':
      return 'waiting-children';
    case 'delayed':
      return 'delayed';
    case 'removed':
      return 'gone';
    case 'retried':
      return e.delayMs ? 'delayed' : 'pending';
    case 'deduplicated':
      // debounce: the job got a newer add's due time
      if (e.outcome === 'replaced') return e.runAt === undefined ? 'pending' : 'delayed';
      return undefined;
    default:
      return undefined;
  }
}
