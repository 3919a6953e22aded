/**
 * Model-based test of one Worker's slots against a real Redis, over any queue a Worker takes
 * (test/property/worker-model.spec.ts: a queue; test/partitions/model.spec.ts: a partitioned
 * one on a Cluster, where a free slot must also find the jobs of every partition).
 *
 * fast-check drives random sequences of what can happen to a running job: its handler
 * returns, throws (an Error, or a revoked Proxy), rejects the job, meets a rate limit, moves
 * it to the delayed set (a step job's snooze) and returns, or never settles; its attempt times out while the handler ignores the signal; its lease is
 * lost (forced remove) while the handler honours or ignores the signal; the worker is closed
 * (running jobs given back) and a new one started. The handlers are the test's: each waits
 * until a step tells it what to do.
 * Half the sequences put the jobs in groups (each group allowed every slot), for both loops: a grouped job's
 * settle leases in the same call, a path of its own.
 *
 * After every step:
 * - slots in use equal handlers running: `worker.inFlight` is the number of handlers that
 *   started and neither ended nor were given up on (signal aborted), and no handler ever
 *   started while `concurrency` others ran;
 * - a worker with a free slot and jobs to run leases within a bound: it comes to run
 *   `concurrency` handlers, or nothing is left pending or delayed;
 * - a job its handler moved to the delayed set is delayed, not failed: no failure counted.
 * After a close, no job of the queue is leased.
 *
 * The same steps drive a BatchWorker, whose slot is a batch (a lane): a batch is running
 * until its handler returns or every job of it timed out or lost its lease.
 *
 * RELQ_FC_SEED / RELQ_FC_PATH replay a failure (fast-check prints both); RELQ_FC_RUNS sets
 * the number of sequences (default 40).
 */
import fc from 'fast-check';
import { BatchWorker, Worker, type BatchOutcome, type Job, type QueueOptions } from '../../lib/index.js';
import type { LogicalQueue } from '../support/logical-behaviour.js';
import { waitUntil } from '../support/wait.js';

const RUNS = Number(process.env.RELQ_FC_RUNS ?? 40);
/** The number of sequences a spec asks for, unless RELQ_FC_RUNS says. */
const runsOr = (n: number) => (process.env.RELQ_FC_RUNS ? RUNS : n);
/** A free slot with jobs waiting must be filled within this (a rate limit holds 30 ms, a timeout is 150 ms). */
const LEASE_BOUND_MS = 5000;
const TIMEOUT_MS = 150;
/** A snoozed job's delay: long past the check that follows its handler's return. */
const SNOOZE_MS = 400;

export type Action = 'return' | 'throw' | 'throwUnreadable' | 'reject' | 'rateLimit' | 'snooze';

type Step =
  | { kind: 'add'; count: number; timed: boolean; ignoresSignal: boolean }
  | { kind: 'act'; pick: number; action: Action }
  | { kind: 'lose'; pick: number }
  | { kind: 'restart' };

export interface JobData {
  /** The attempt runs past timeoutMs: its handler waits for nothing but a step. */
  timed: boolean;
  /** The handler ignores its signal: it runs on after a timeout, a lost lease, a give-back. */
  ignoresSignal: boolean;
}

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('add' as const), count: fc.integer({ min: 1, max: 3 }), timed: fc.boolean(), ignoresSignal: fc.boolean() }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('act' as const),
      pick: fc.nat(),
      action: fc.constantFrom<Action>('return', 'throw', 'throwUnreadable', 'reject', 'rateLimit', 'snooze'),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('lose' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart' as const) }) },
);

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

function aborted(signal: AbortSignal): Promise<'aborted'> {
  return new Promise((resolve) => (signal.aborted ? resolve('aborted') : signal.addEventListener('abort', () => resolve('aborted'), { once: true })));
}

/** A fresh, empty queue for one sequence, with these options. */
export type OpenModelQueue = (opts: Pick<QueueOptions, 'groupConcurrency'>) => LogicalQueue<JobData>;

/** One handler call: a job's (Worker) or a batch's (BatchWorker). */
class Run {
  returned = false;
  /** Set once its handler snoozed the first job: whether that moved it. */
  snoozed: boolean | undefined;
  act!: (a: Action) => void;
  readonly acted = new Promise<Action>((resolve) => (this.act = resolve));
  constructor(readonly jobs: Array<Job<JobData>>) {}
  /** Counted by the worker: started, not returned, some job of it not given up on (signal aborted). */
  get live(): boolean {
    return !this.returned && this.jobs.some((j) => !j.signal.aborted);
  }
  /** What the step told it, or 'aborted' once every job's signal aborted (unless it ignores them). */
  next(): Promise<Action | 'aborted'> {
    const waits: Array<Promise<Action | 'aborted'>> = [this.acted];
    if (!this.jobs[0]!.data.ignoresSignal) waits.push(Promise.all(this.jobs.map((j) => aborted(j.signal))).then(() => 'aborted' as const));
    return Promise.race(waits);
  }
}

/** The loop under test: how it starts, what it counts as held, how it closes. */
interface Rig {
  /** A new loop on `q` whose handler reports each call through `started`, then waits for a step. */
  start(q: LogicalQueue<JobData>, concurrency: number, started: (run: Run) => void): { held(): number; close(o: { drainTimeoutMs: number }): Promise<void> };
  /** What `held()` counts: 'slots' (handlers) or 'lanes' (batches). */
  unit: string;
}

/** Runs one sequence on a fresh queue; throws at the first broken invariant. */
async function runSequence(open: OpenModelQueue, rig: Rig, concurrency: number, steps: Step[], groupLimit?: number): Promise<void> {
  // groupLimit: jobs in three groups, each allowed as many leases as the loop can hold (so a
  // free slot still has a job to take), through the groups' settle-and-lease path
  const grouped = groupLimit !== undefined;
  const q = open(grouped ? { groupConcurrency: groupLimit } : {});
  const runs: Run[] = [];
  const violations: string[] = [];
  const live = () => runs.filter((r) => r.live);
  const started = (run: Run) => {
    if (live().length >= concurrency) violations.push(`a handler started while ${live().length} ran (concurrency ${concurrency})`);
    runs.push(run);
  };
  const loopOn = () => rig.start(q, concurrency, started);
  let loop = loopOn();
  let added = 0;
  let removed = 0;
  const trace: string[] = [];
  try {
    for (const step of steps) {
      trace.push(JSON.stringify(step));
      switch (step.kind) {
        case 'add': {
          const opts = { attempts: 2, backoff: { type: 'fixed' as const, delayMs: 20, jitter: 0 }, ...(step.timed ? { timeoutMs: TIMEOUT_MS } : {}) };
          await q.addBulk(Array.from({ length: step.count }, () => ({ data: { timed: step.timed, ignoresSignal: step.ignoresSignal }, opts: { ...opts, jobId: `j${++added}`, ...(grouped ? { group: `g${added % 3}` } : {}) } })));
          break;
        }
        case 'act': {
          const l = live();
          if (!l.length) break;
          const run = l[step.pick % l.length]!;
          run.act(step.action);
          if (step.action === 'snooze') await snoozedNotFailed(q, run, violations);
          break;
        }
        case 'lose': {
          // every job of the call: a batch's lane is free only then
          const l = live();
          if (l.length) for (const job of l[step.pick % l.length]!.jobs) if (await q.remove(job.id, { force: true })) removed += 1;
          break;
        }
        case 'restart': {
          await loop.close({ drainTimeoutMs: 0 });
          const c = await q.counts();
          if (c.working !== 0) violations.push(`after close, ${c.working} jobs are still leased`);
          loop = loopOn();
          break;
        }
      }
      const l = loop;
      await waitUntil(() => l.held() === live().length, `${rig.unit} in use (${l.held()}) equal handlers running (${live().length}) after ${trace.join(' ')}`, 3000);
      await waitUntil(
        async () => {
          if (l.held() === concurrency) return true;
          const c = await q.counts();
          return c.pending === 0 && c.delayed === 0 && l.held() === live().length;
        },
        `free ${rig.unit} lease the waiting jobs (${l.held()} of ${concurrency} in use) after ${trace.join(' ')}`,
        LEASE_BOUND_MS,
        20,
      );
      // every job added and not removed is somewhere, once
      const c = await q.counts();
      const held = c.pending + c.working + c.delayed + c.completed + c.dead;
      if (held !== added - removed) violations.push(`the queue holds ${held} jobs, ${added} added and ${removed} removed`);
      if (violations.length) throw new Error(`${violations.join('; ')} after ${trace.join(' ')}`);
    }
  } finally {
    for (const r of runs) r.act('return'); // let every handler still waiting end
    await loop.close({ drainTimeoutMs: 0 });
    await q.close();
  }
}

/**
 * A handler told to snooze moved its first job to the delayed set and returned: once it has,
 * that job (when the move took) is delayed with no failure counted for the attempt.
 */
async function snoozedNotFailed(q: LogicalQueue<JobData>, run: Run, violations: string[]): Promise<void> {
  await waitUntil(() => run.returned, 'the snoozing handler returned', 3000);
  if (!run.snoozed) return; // its attempt ended first (timed out, lost): nothing moved
  const job = run.jobs[0]!;
  const info = await q.getJob(job.id);
  if (info?.state !== 'delayed' || info.failures !== job.attempt - 1) {
    violations.push(`snoozed job ${job.id} (attempt ${job.attempt}) is ${info?.state} with ${info?.failures} failures`);
  }
}

/** What a handler does when told `action` (a Worker's job, or a whole batch). */
async function perform(run: Run, action: Action | 'aborted'): Promise<'ok' | Array<BatchOutcome<string>>> {
  const [first] = run.jobs;
  switch (action) {
    case 'aborted':
      throw first!.signal.reason;
    case 'return':
      return 'ok';
    case 'throw':
      throw new Error('failed on purpose');
    case 'throwUnreadable':
      throw revokedProxy();
    case 'reject':
      if (run.jobs.length === 1) return first!.reject('rejected on purpose');
      // a batch: the first job completed, the others dead-lettered
      return run.jobs.map((_, i) => (i === 0 ? { ok: true, result: 'ok' } : { ok: false, retry: false, error: 'rejected on purpose' }));
    case 'rateLimit':
      return first!.rateLimit(30);
    case 'snooze':
      // a batch: the other jobs complete
      run.snoozed = await first!.snooze(SNOOZE_MS);
      return 'ok';
  }
}

const replay = {
  ...(process.env.RELQ_FC_SEED ? { seed: Number(process.env.RELQ_FC_SEED) } : {}),
  ...(process.env.RELQ_FC_PATH ? { path: process.env.RELQ_FC_PATH } : {}),
  interruptAfterTimeLimit: 240_000,
  markInterruptAsFailure: false,
};
const steps = fc.array(stepArb, { minLength: 4, maxLength: 14 });

const worker: Rig = {
  unit: 'slots',
  start(q, concurrency, started) {
    const w = new Worker<JobData>(
      q,
      async (job) => {
        const run = new Run([job]);
        started(run);
        try {
          return (await perform(run, await run.next())) as string;
        } finally {
          run.returned = true;
        }
      },
      { concurrency, leaseMs: 1000, blockMs: 500 },
    );
    return { held: () => w.inFlight, close: (o) => w.close(o) };
  },
};

/** A BatchWorker's slot is a lane: `concurrency` batches of up to `size` jobs. */
const batchWorker = (size: number): Rig => ({
  unit: 'lanes',
  start(q, concurrency, started) {
    const w = new BatchWorker<JobData>(
      q,
      async (jobs) => {
        const run = new Run(jobs);
        started(run);
        try {
          const done = await perform(run, await run.next());
          return done === 'ok' ? undefined : done;
        } finally {
          run.returned = true;
        }
      },
      { size, concurrency, leaseMs: 1000, blockMs: 500 },
    );
    return { held: () => w.batchesHeld, close: (o) => w.close(o) };
  },
});

/** The model's two properties, each sequence on a queue from `open`. */
export function describeWorkerModel(title: string, open: OpenModelQueue, defaultRuns = 40): void {
  const runs = runsOr(defaultRuns);
  test(`${title}: Worker: slots in use equal handlers running, and a free slot leases within a bound`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4 }), steps, fc.boolean(), (concurrency, seq, grouped) =>
        runSequence(open, worker, concurrency, seq, grouped ? concurrency : undefined),
      ),
      { numRuns: runs, ...replay },
    );
  }, 300_000);

  test(`${title}: BatchWorker: batches held equal batches running, and a free lane leases within a bound`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 }), steps, fc.boolean(), (concurrency, size, seq, grouped) =>
        runSequence(open, batchWorker(size), concurrency, seq, grouped ? concurrency * size : undefined),
      ),
      { numRuns: runs, ...replay },
    );
  }, 300_000);
}
