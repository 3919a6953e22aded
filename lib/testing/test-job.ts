/**
 * The job a handler sees, without Redis: for unit tests of processors. It is the worker's own
 * job class (lib/core/worker/job-view.ts) over a lease that lives in memory, so `signal`,
 * `reject()` and `rateLimit()` behave exactly as in a worker; what the handler reports
 * (progress, log lines, touches, data, delays, children) is recorded for the test to assert.
 */
import { DEFAULT_LEASE_MS, DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_POLICY } from '../core/defaults.js';
import { assertLogLine, progressJson } from '../core/progress/progress.js';
import type { JobPolicy } from '../core/adds/types.js';
import type { Lease, LeasedJob } from '../core/leases/types.js';
import type { JobProgress } from '../core/management/read-types.js';
import { toJson } from '../core/validate.js';
import { HeldLease, JobView, type Job, type JobCalls } from '../core/worker/job-view.js';
import { delayItem } from '../core/settles/settle-items.js';
import { LeaseLostError } from '../core/errors.js';
import { IdGenerator } from '../core/adds/ids.js';
import { markCreated, planChildren } from '../core/flows/plan.js';
import type { AddFlowOptions, FlowJob, FlowResult } from '../core/flows/types.js';

/** What a test may set on a job made by `createTestJob()`; everything else has a default. */
export interface TestJobOverrides extends Partial<Omit<LeasedJob<unknown>, 'data' | 'policy'>> {
  /** Merged over the policy a queue without `defaults` gives its jobs. */
  policy?: Partial<JobPolicy>;
  /** Lease deadline, epoch ms (default: now + the policy's leaseMs, else 30 s). */
  deadline?: number;
  /** What `job.childrenResults()` answers, child id → result (a flow's parent). Default `{}`. */
  childrenResults?: Record<string, unknown>;
}

/** A `Job<Data>` that records what the handler did with it. */
export interface TestJob<Data> extends Job<Data> {
  /** Each `updateProgress()` value, in order, as stored (a JSON copy). */
  readonly progressUpdates: JobProgress[];
  /** Each `log()` line, in order. */
  readonly logs: string[];
  /** The `extendMs` of each `touch()` (undefined: the lease's own length). */
  readonly touches: Array<number | undefined>;
  /** Each `rateLimit()` call (which also throws its RateLimitError, as in a worker). */
  readonly rateLimits: Array<{ delayMs: number; scope: 'auto' | 'queue' }>;
  /** Each `reject()` reason (which also throws its UnrecoverableError). */
  readonly rejections: string[];
  /** Each `updateData()` value, in order, as stored (a JSON copy); `data` becomes the value given, as in a worker. */
  readonly dataUpdates: Data[];
  /**
   * Each `moveToDelayed()` (`runAt`, epoch ms) and `snooze()` (`delayMs`). As in a worker, the
   * first one ends the lease: the others, and touch, updateProgress, log and updateData, then
   * answer false and record nothing.
   */
  readonly delays: Array<{ runAt: number } | { delayMs: number }>;
  /**
   * Each `addChildren()` call's children, as given (checked as a queue checks them); the ids
   * answered are the children's jobIds or generated ones, all `created`.
   */
  readonly childrenAdded: Array<ReadonlyArray<FlowJob<unknown>>>;
  /** How many times `waitForChildren()` ended the lease (the first one does; then the lease is over). */
  readonly childrenWaits: number;
  /** Aborts `signal` with `reason`, as a worker does when the attempt times out or is given back. */
  abort(reason?: Error): void;
  /**
   * The lease is lost: `signal` aborts; touch, updateProgress, log, updateData, the delays and
   * waitForChildren answer false and record nothing; addChildren throws LeaseLostError.
   */
  loseLease(): void;
}

let made = 0;

/**
 * A job for a handler under test. `data` is checked and copied as a queue stores it (JSON):
 * the handler sees what it would see from Redis, e.g. a Date as its ISO string.
 */
export function createTestJob<Data>(data: Data, overrides: TestJobOverrides = {}): TestJob<Data> {
  const { policy, deadline, childrenResults, ...fields } = overrides;
  const now = Date.now();
  const fullPolicy: JobPolicy = { ...DEFAULT_POLICY, ...policy };
  made += 1;
  const job: LeasedJob<Data> = {
    id: `test-job-${made}`,
    name: '',
    attempt: 1,
    maxAttempts: fullPolicy.attempts,
    priority: 0,
    requeues: 0,
    createdAt: now,
    leasedAt: now,
    ...fields,
    data: JSON.parse(toJson('data', data, DEFAULT_MAX_PAYLOAD_BYTES)) as Data,
    policy: fullPolicy,
  };
  const leaseMs = fullPolicy.leaseMs ?? DEFAULT_LEASE_MS;
  const lease: Lease<Data> = { job, token: 'test-token', deadline: deadline ?? now + leaseMs, leaseMs };
  const held = new HeldLease(lease);
  return new RecordingJob(held, new Recorder(held, childrenResults ?? {}));
}

/** The calls a worker would send to Redis, answered in memory and recorded. */
class Recorder<Data> implements JobCalls<Data> {
  readonly progressUpdates: JobProgress[] = [];
  readonly logs: string[] = [];
  readonly touches: Array<number | undefined> = [];
  readonly dataUpdates: Data[] = [];
  readonly delays: Array<{ runAt: number } | { delayMs: number }> = [];
  readonly childrenAdded: Array<ReadonlyArray<FlowJob<unknown>>> = [];
  childrenWaits = 0;
  private readonly ids = new IdGenerator();

  constructor(
    private readonly held: HeldLease<Data>,
    private readonly children: Record<string, unknown>,
  ) {}

  async touch(_held: HeldLease<Data>, extendMs?: number): Promise<boolean> {
    if (!this.held.live) return false;
    this.touches.push(extendMs);
    this.held.lease.deadline = Date.now() + (extendMs ?? this.held.leaseLen);
    return true;
  }

  async updateProgress(_lease: Lease<Data>, progress: JobProgress): Promise<boolean> {
    const json = progressJson(progress, DEFAULT_MAX_PAYLOAD_BYTES);
    if (!this.held.live) return false;
    this.progressUpdates.push(JSON.parse(json) as JobProgress);
    return true;
  }

  async log(_lease: Lease<Data>, line: string): Promise<boolean> {
    assertLogLine(line, DEFAULT_MAX_PAYLOAD_BYTES);
    if (!this.held.live) return false;
    this.logs.push(line);
    return true;
  }

  async updateData(_lease: Lease<Data>, data: Data): Promise<boolean> {
    const json = toJson('data', data, DEFAULT_MAX_PAYLOAD_BYTES);
    if (!this.held.live) return false;
    this.dataUpdates.push(JSON.parse(json) as Data);
    return true;
  }

  async delay(_held: HeldLease<Data>, when: { runAt: number | Date } | { delayMs: number }): Promise<boolean> {
    delayItem(this.held.lease, when); // a bad time throws, as in a worker
    if (!this.held.live) return false;
    this.held.moved = 'delayed';
    this.delays.push('delayMs' in when ? { delayMs: when.delayMs } : { runAt: Number(when.runAt) });
    return true;
  }

  async childrenResults(): Promise<Record<string, unknown>> {
    return { ...this.children };
  }

  async waitForChildren(): Promise<boolean> {
    if (!this.held.live) return false;
    this.held.moved = 'waiting-children';
    this.childrenWaits += 1;
    return true;
  }

  async addChildren(_held: HeldLease<Data>, children: ReadonlyArray<FlowJob<unknown>>, opts: AddFlowOptions): Promise<FlowResult[]> {
    const { result } = planChildren(this.held.lease.job.id, children, opts, {
      queue: 'test',
      tagOf: (name) => name,
      defaults: this.held.lease.job.policy,
      maxPayloadBytes: DEFAULT_MAX_PAYLOAD_BYTES,
      ids: this.ids,
      now: Date.now(),
    });
    if (!this.held.live) throw new LeaseLostError(this.held.lease.job.id);
    this.childrenAdded.push(children);
    return result.children.map((child) => markCreated(child, true));
  }
}

class RecordingJob<Data> extends JobView<Data> implements TestJob<Data> {
  readonly progressUpdates: JobProgress[];
  readonly logs: string[];
  readonly touches: Array<number | undefined>;
  readonly rateLimits: Array<{ delayMs: number; scope: 'auto' | 'queue' }> = [];
  readonly rejections: string[] = [];
  readonly dataUpdates: Data[];
  readonly delays: Array<{ runAt: number } | { delayMs: number }>;
  readonly childrenAdded: Array<ReadonlyArray<FlowJob<unknown>>>;
  readonly #held: HeldLease<Data>;
  readonly #recorder: Recorder<Data>;

  constructor(held: HeldLease<Data>, recorder: Recorder<Data>) {
    super(held, recorder);
    this.#held = held;
    this.progressUpdates = recorder.progressUpdates;
    this.logs = recorder.logs;
    this.touches = recorder.touches;
    this.dataUpdates = recorder.dataUpdates;
    this.delays = recorder.delays;
    this.childrenAdded = recorder.childrenAdded;
    this.#recorder = recorder;
  }

  get childrenWaits(): number {
    return this.#recorder.childrenWaits;
  }

  override reject(reason = 'rejected'): never {
    this.rejections.push(reason);
    return super.reject(reason);
  }

  override rateLimit(delayMs: number, opts: { scope?: 'auto' | 'queue' } = {}): never {
    this.rateLimits.push({ delayMs, scope: opts.scope ?? 'auto' });
    return super.rateLimit(delayMs, opts);
  }

  abort(reason: Error = new Error(`job ${this.id} was aborted by the test`)): void {
    this.#held.abort(reason);
  }

  loseLease(): void {
    this.#held.markLost();
  }
}
