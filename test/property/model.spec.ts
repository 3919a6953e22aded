/**
 * Model-based test of the Queue's lease-level API against a real Redis.
 *
 * fast-check generates random sequences (up to MAX_COMMANDS) of add, addBulk (with and
 * without the lifo option, with retention counts keepCompleted / keepDead { count }, with
 * deduplication ids in each mode, keepLastIfActive too), lease, ack, ackBatch, nack,
 * requeue, reject, touch, sweep, pause, resume, retryDead, purgeDead, the job-management
 * calls (remove with and without force, promote, changePriority with and without lifo, drain,
 * clean('completed' | 'dead') by age and limit, pages of getJobs of one state and of several,
 * getCountsPerPriority, cancel, retry of a finished job, updateData, changeDelay, clearLogs,
 * removeDeduplicationKey), updateProgress and log, and stale / forged lease operations; each
 * sequence runs on a fresh queue (its own prefix) and, in lock step, on a small reference
 * model (class Model below). After EVERY step the real queue is compared with the model and
 * with invariants of its own, read through the public API (counts(), getJob() with its
 * progress and logs, getJobs() of every state both ways, listDead(), getDeduplicationJobId()
 * of every deduplication id) and through the raw keys of the queue (a separate ioredis client; key names from queue.keys.byName and .derived: progress
 * and log lines included). A management call with nothing to do (promote of a job that is not
 * delayed, remove of one that is not there, drain of an empty queue, ...) or refused
 * (remove of a leased job without force: JobLeasedError) must change no key; so must
 * updateProgress and log through a stale or forged lease, an add that a held deduplication id
 * ignores, and the reads (getJobs, getCountsPerPriority). Replay records of lease and
 * settle requests (`…:req:<id>`: what a request answered, kept a while so that a resent
 * request gets the same answer) expire by themselves and are left out of the "changed
 * nothing" comparisons; every other key must be identical.
 *
 * Time. Deadlines, delays and retention windows are either TINY (1-4 ms) or LARGE (10
 * minutes or more). Before each step the driver waits until the Redis clock has passed
 * every tiny score it has seen (the "horizon"), so at any step every tiny lease / delay /
 * retention has run out and no large one has: the model stays deterministic on a loaded
 * machine, and expired-but-not-yet-swept leases are exercised at every step. clean() by age
 * is the one call whose outcome the clock decides: with a tiny olderThanMs the driver waits
 * until every finished job is that old; with an age between two jobs' finishes (`split`) the
 * result must be what some cutoff within the call's start and end allows.
 *
 * Retention by count trims the completed (dead) jobs oldest first, by end of retention (time
 * of death), when the call that finished a job with a count ends; the model must know where
 * the jobs that call finished stand before their scores are read. So before such a call the
 * driver also waits until the clock is past every earlier completion and death, and a count
 * is given with ageMs 0, LARGE or the default only (never tiny): the jobs a call finishes are
 * then the newest of their retention class, and the classes (tiny, LARGE, 2 × LARGE, 1 h) are
 * farther apart than a run lasts. Throttle windows are LARGE only; debounced delays tiny or
 * LARGE, as every delay. An add kept for a running holder's end (keepLastIfActive) gets its id
 * when it is added, not when the model learns of it: the model names it from the one new
 * record carrying its deduplication id (meta dd) after the call that ended the holder.
 *
 * REPLAY. A failure prints fast-check's report, which holds `seed`, `path` and, in the
 * counterexample, a `replayPath`. Replay that exact sequence with:
 *
 *   RELQ_FC_SEED=<seed> RELQ_FC_PATH=<path> RELQ_FC_REPLAY_PATH=<replayPath> \
 *     node --experimental-vm-modules node_modules/jest/bin/jest.js --runInBand test/property/model.spec.ts
 *
 * The failure message ends with this command line filled in. All three are needed to replay
 * the shrunk sequence; RELQ_FC_SEED alone replays the whole property (which finds and
 * shrinks the failure again).
 * RELQ_FC_RUNS=<n> changes the number of runs (default 60); RELQ_FC_SHRINK_MS the time
 * spent shrinking a failure (default 30 s; then the smallest failure found is reported).
 *
 * No input is narrowed: retryDead / purgeDead get id lists with the same id several times
 * (an id named twice is moved / removed once, and returned once), and backoffs with a jitter
 * of full double precision (the leased job's policy must give it back exactly, after any
 * number of failures; a nack without delayMs then draws its delay from the jitter, so the
 * model reads whether the job went to delayed or pending, and checks its due time is in the
 * jitter's range). Two macro steps (`jitter[...]`, `dead[...]`) make both common. The last
 * describe block pins both with minimal examples.
 */
import fc from 'fast-check';
import { assertReplayable } from './replay.js';
import { ModelMismatch, same } from './model-checks.js';
import type { Redis } from 'ioredis';
import { JobLeasedError, JobNotRetryableError, Queue, type Backoff, type BulkJob, type Lease, type JobInfo, type JobPage, type JobProgress, type SweepResult } from '../../lib/index.js';
import { redisClient, startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { readCommand } from '../support/key-read.js';

// ---- configuration -------------------------------------------------------------------

const NUM_RUNS = Number(process.env.RELQ_FC_RUNS ?? 60);
const MAX_COMMANDS = 40;
const SHRINK_BUDGET_MS = Number(process.env.RELQ_FC_SHRINK_MS ?? 30_000);
const REPLAY_PATH = process.env.RELQ_FC_REPLAY_PATH;

/** Tiny and large durations (ms). Tiny ones have run out by the next step, large ones never do. */
const LARGE_MS = 600_000;
/** A score this close to "now" is tiny; farther than AMBIGUOUS_MS is large; between is a bug. */
const TINY_SLACK_MS = 1_000;
const AMBIGUOUS_MS = 60_000;
const DEFAULT_KEEP_MS = 3_600_000;
/** The documented default backoff (README): exponential from 1 s, at most 1 h, jitter 0.2. */
const DEFAULT_BACKOFF: Backoff = { type: 'exponential', delayMs: 1000, maxDelayMs: 3_600_000, jitter: 0.2 };
/** The model's queues keep this many log lines per job (small: the trimming happens often). */
const MAX_LOG_LINES = 3;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type State = 'pending' | 'working' | 'delayed' | 'completed' | 'dead';

// ---- raw observation -----------------------------------------------------------------

type Pairs = Array<[string, number]>;
interface KeyValue {
  type: string;
  value: unknown;
}

/** Every key of the queue's hash tag with its type and full value (SCAN, in the test only). */
async function snapshotQueue(obs: Redis, q: Queue<any, any>): Promise<Map<string, KeyValue>> {
  const keys: string[] = [];
  let cursor = '0';
  const pattern = `${q.keys.tag.replace(/[*?[\]\\{}]/g, (c) => `\\${c}`)}:*`;
  do {
    const [next, batch] = await obs.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  keys.sort();
  const types = (await obs.pipeline(keys.map((k) => ['type', k])).exec())!.map(([, t]) => String(t));
  const reads = keys.map((k, i) => readCommand(types[i]!, k));
  const values = (await obs.pipeline(reads).exec())!;
  const out = new Map<string, KeyValue>();
  keys.forEach((k, i) => {
    const [err, v] = values[i]!;
    if (err) throw err;
    let value: unknown = v;
    if (types[i] === 'set') value = [...(v as string[])].sort();
    if (types[i] === 'zset') value = toPairs(v as string[]);
    if (types[i] === 'hash') value = Object.fromEntries(Object.entries(v as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    if (types[i] !== 'none') out.set(k, { type: types[i]!, value });
  });
  return out;
}

function toPairs(flat: string[]): Pairs {
  const out: Pairs = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, Number(flat[i + 1])]);
  return out;
}

/** The snapshot without lease replay records (they expire by themselves). */
function withoutReplayRecords(snap: Map<string, KeyValue>, q: Queue<any, any>): Record<string, KeyValue> {
  const out: Record<string, KeyValue> = {};
  for (const [k, v] of snap) if (!k.startsWith(`${q.keys.tag}:req:`)) out[k] = v;
  return out;
}

async function redisNow(c: Redis): Promise<number> {
  const [s, us] = await c.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Redis sorts equal scores by the members' bytes. */
function byScoreThenId(a: [string, number], b: [string, number]): number {
  return a[1] - b[1] || Buffer.compare(Buffer.from(a[0]), Buffer.from(b[0]));
}

function assert(cond: unknown, what: string): asserts cond {
  if (!cond) throw new ModelMismatch(what);
}

// ---- the reference model ---------------------------------------------------------------

interface MJob {
  id: string;
  /** One number per job created (ids of custom jobs are reused after the job is gone). */
  instance: number;
  custom: boolean;
  data: Json;
  name: string;
  priority: number;
  attempts: number;
  leaseMs: number | undefined;
  keepMs: number;
  /** keepCompleted.count / keepDead.count */
  keepCount: number | undefined;
  deadCount: number | undefined;
  /** The deduplication id its add carried (JobInfo.deduplicationId), held or not. */
  dedupId: string | undefined;
  dedupMs: number;
  /** Fixed backoff delay; undefined: the default exponential backoff. */
  fixedBackoff: number | undefined;
  /** The backoff every lease of the job must report in its policy, to the last bit of its jitter. */
  backoff: Backoff;
  state: State;
  f: number;
  o: number;
  r: number;
  e: string | undefined;
  /** Times leased. */
  leased: number;
  /** working: the current token and deadline. */
  token: string | undefined;
  deadline: number | undefined;
  /** delayed: due; completed: end of retention; dead: time of death (observed from Redis). */
  score: number | undefined;
  /** delayed: when it became delayed, among all jobs (equal due times keep this order). */
  delayOrder: number | undefined;
  /** completed: the stored result. */
  result: Json | undefined;
  /** completed: when it completed (observed from its stored result). */
  completedAt: number | undefined;
  /** The last progress a current lease stored (kept across attempts, gone with the job). */
  progress: Json | undefined;
  /** Log lines a current lease appended, the last MAX_LOG_LINES (kept across attempts). */
  logs: string[];
  /** The token of the lease that wrote the last line. */
  logToken: string | undefined;
}

class Model {
  readonly jobs = new Map<string, MJob>();
  /** Priority-0 leasable ids, FIFO. */
  pending: string[] = [];
  /** Prioritized leasable ids with their FIFO sequence. */
  prio: Array<{ id: string; p: number; seq: number }> = [];
  private seq = 0;
  private delays = 0;
  private instances = 0;
  /** Custom id -> end of its idempotency window (observed). */
  readonly dedup = new Map<string, number | undefined>();
  paused = false;
  /** Every lease ever returned, in order. */
  readonly leases: Array<Lease<Json>> = [];
  readonly tokens = new Set<string>();
  /** Ids that existed once and are gone now (getJob must answer null while not re-added). */
  readonly gone = new Set<string>();
  /**
   * Deduplication id -> the job that holds it and the mode of the add that took it. A throttle
   * (LARGE windows only) holds for the whole run, whatever its job does; the others until
   * their job completes, dies or is removed.
   */
  readonly holders = new Map<string, Holder>();
  /** Jobs made from kept adds by this step's call; their ids are read from Redis after it (Env.nameKeptJobs). */
  readonly unnamed: MJob[] = [];
  private kepts = 0;
  /** Retention by count asked by the jobs the current call finished: the smallest count, and the removals allowed. */
  doneTrim: { most: number; budget: number } | undefined;
  deadTrim: { most: number; budget: number } | undefined;

  create(id: string, custom: boolean, data: Json, opts: JobOpts | undefined): MJob {
    const backoff = opts?.backoff;
    const job: MJob = {
      id,
      instance: ++this.instances,
      custom,
      data,
      name: opts?.name ?? '',
      priority: opts?.priority ?? 0,
      attempts: opts?.attempts ?? 3,
      leaseMs: opts?.leaseMs,
      keepMs: opts?.keepCompleted?.ageMs ?? opts?.keepCompletedMs ?? DEFAULT_KEEP_MS,
      keepCount: opts?.keepCompleted?.count,
      deadCount: opts?.keepDead?.count,
      dedupId: opts?.deduplication?.id,
      dedupMs: custom ? (opts?.dedupWindowMs ?? 86_400_000) : 0,
      fixedBackoff: backoff === undefined ? undefined : typeof backoff === 'number' ? backoff : backoff.delayMs,
      backoff:
        backoff === undefined ? DEFAULT_BACKOFF : typeof backoff === 'number' ? { type: 'fixed', delayMs: backoff, jitter: 0 } : { ...backoff },
      state: 'pending',
      f: 0,
      o: 0,
      r: 0,
      e: undefined,
      leased: 0,
      token: undefined,
      deadline: undefined,
      score: undefined,
      delayOrder: undefined,
      result: undefined,
      completedAt: undefined,
      progress: undefined,
      logs: [],
      logToken: undefined,
    };
    this.jobs.set(id, job);
    this.gone.delete(id);
    return job;
  }

  /** Leasable behind the jobs of its priority, or (`head`: the lifo add option) before them. */
  makePending(job: MJob, head = false): void {
    job.state = 'pending';
    job.score = undefined;
    if (job.priority === 0) {
      if (head) this.pending.unshift(job.id);
      else this.pending.push(job.id);
    } else {
      const seq = ++this.seq;
      this.prio.push({ id: job.id, p: job.priority, seq: head ? -seq : seq });
      this.prio.sort((a, b) => b.p - a.p || a.seq - b.seq);
    }
  }

  /** Takes a pending job out of the FIFO list or the prioritized ones. */
  unqueue(job: MJob): void {
    assert(job.state === 'pending', `job ${job.id} is not pending`);
    this.pending = this.pending.filter((id) => id !== job.id);
    this.prio = this.prio.filter((x) => x.id !== job.id);
  }

  /** Pending ids in lease order (what getJobs('pending') lists). */
  leaseOrder(): string[] {
    const high = this.prio.filter((x) => x.p > 0).map((x) => x.id);
    const low = this.prio.filter((x) => x.p < 0).map((x) => x.id);
    return [...high, ...this.pending, ...low];
  }

  makeDelayed(job: MJob): void {
    job.state = 'delayed';
    job.score = undefined; // observed after the step
    job.delayOrder = ++this.delays;
  }

  /** The delayed jobs due at `now` in the order they become pending: by due time, then in the order they were delayed. */
  dueJobs(now: number): MJob[] {
    const due = pastScores(this.inState('delayed').map((j) => [j.id, j.score!]), now, 'due time');
    return due.map(([id]) => this.jobs.get(id)!).sort((a, b) => a.score! - b.score! || a.delayOrder! - b.delayOrder!);
  }

  /** Ends the current lease (settled or expired). */
  endLease(job: MJob): void {
    assert(job.state === 'working', `job ${job.id} is not working`);
    job.token = undefined;
    job.deadline = undefined;
  }

  /** A failed attempt; retried after `delayMs` or dead-lettered. */
  fail(job: MJob, reason: string, delayMs: number): void {
    job.f += 1;
    job.e = reason;
    if (job.f - job.o >= job.attempts) this.kill(job);
    else if (delayMs > 0) this.makeDelayed(job);
    else this.makePending(job);
  }

  kill(job: MJob): void {
    job.state = 'dead';
    job.score = undefined; // observed after the step
    this.release(job, true);
    if (job.deadCount !== undefined) this.deadTrim = noteCount(this.deadTrim, job.deadCount);
  }

  /** Acked: kept (its result) or gone at once; its idempotency window opens. */
  complete(job: MJob, result: Json | undefined): void {
    this.release(job, true);
    if (job.keepMs > 0) {
      job.state = 'completed';
      job.result = result;
      job.score = undefined; // observed after the step
    } else this.remove(job);
    if (job.custom && job.dedupMs > 0) this.dedup.set(job.id, undefined);
    if (job.keepCount !== undefined) this.doneTrim = noteCount(this.doneTrim, job.keepCount);
  }

  /** The job is gone, with its progress and log (a pending one must be unqueued first). */
  remove(job: MJob): void {
    this.jobs.delete(job.id);
    this.gone.add(job.id);
    this.release(job);
  }

  /**
   * The end of a job frees the deduplication id it holds, unless a throttle holds it. When it
   * completed or died (`ended`), the add kept for that moment (keepLastIfActive) is added now
   * and takes the id; when it was removed, the kept add goes with it.
   */
  release(job: MJob, ended = false): void {
    const h = job.dedupId === undefined ? undefined : this.holders.get(job.dedupId);
    if (!h || h.job !== job.id || h.mode === 'throttle') return;
    this.holders.delete(job.dedupId!);
    if (!ended || !h.kept) return;
    const kept = this.create(`kept:${++this.kepts}`, false, h.kept.data, h.kept.opts);
    this.holders.set(job.dedupId!, { job: kept.id, mode: modeOf(h.kept.opts!.deduplication!) });
    // added whole at the end: its delay counts from then, a lifo add goes to the head then
    if ((h.kept.opts?.delayMs ?? 0) > 0) this.makeDelayed(kept);
    else this.makePending(kept, h.kept.opts?.lifo);
    this.unnamed.push(kept);
  }

  /** A job made from a kept add gets the id its add generated. */
  rename(job: MJob, id: string): void {
    const old = job.id;
    this.jobs.delete(old);
    job.id = id;
    this.jobs.set(id, job);
    this.pending = this.pending.map((x) => (x === old ? id : x));
    for (const x of this.prio) if (x.id === old) x.id = id;
    for (const h of this.holders.values()) if (h.job === old) h.job = id;
  }

  /**
   * The end of a call: the completed (dead) jobs are trimmed to the smallest count a job it
   * finished asked for, oldest first, at most RETENTION_STEP per such job. Those it finished
   * have no observed score yet: `t` (a time in or after the call, later than every earlier
   * finish) stands for their finish. Returns how many went, and whether the budget stopped it.
   */
  trimRetention(t: number): { completed: number; dead: number; capped: boolean } {
    const out = { completed: 0, dead: 0, capped: false };
    for (const state of ['completed', 'dead'] as const) {
      const note = state === 'completed' ? this.doneTrim : this.deadTrim;
      if (!note) continue;
      const at = (j: MJob): number => j.score ?? (state === 'completed' ? t + j.keepMs : t);
      const set = this.inState(state).map((j): [string, number] => [j.id, at(j)]).sort(byScoreThenId);
      const excess = set.length - note.most;
      if (excess > note.budget) out.capped = true;
      for (const [id] of set.slice(0, Math.max(0, Math.min(excess, note.budget)))) this.remove(this.jobs.get(id)!);
      out[state] = Math.max(0, Math.min(excess, note.budget));
    }
    this.doneTrim = undefined;
    this.deadTrim = undefined;
    return out;
  }

  /** What lease() takes: priority > 0 first, then the FIFO list, then priority < 0. */
  take(count: number): string[] {
    const taken = this.leaseOrder().slice(0, count);
    const set = new Set(taken);
    this.pending = this.pending.filter((id) => !set.has(id));
    this.prio = this.prio.filter((x) => !set.has(x.id));
    return taken;
  }

  isCurrent(lease: Lease<Json>): boolean {
    const job = this.jobs.get(lease.job.id);
    return job !== undefined && job.state === 'working' && job.token === lease.token;
  }

  liveLeases(): Array<Lease<Json>> {
    return this.leases.filter((l) => this.isCurrent(l));
  }

  inState(state: State): MJob[] {
    return [...this.jobs.values()].filter((j) => j.state === state);
  }
}

/** Removals beyond a count that one finished job with a count allows (README, retention). */
const RETENTION_STEP = 10;

interface Holder {
  job: string;
  mode: DedupMode;
  /** keepLastIfActive: the add kept while the job ran, added when it completes or dies. */
  kept?: AddItem;
}

function modeOf(d: DedupOpts): DedupMode {
  return d.mode ?? (d.ttlMs === undefined ? 'untilEnded' : 'throttle');
}

function noteCount(note: { most: number; budget: number } | undefined, count: number): { most: number; budget: number } {
  return { most: Math.min(note?.most ?? count, count), budget: (note?.budget ?? 0) + RETENTION_STEP };
}

/** Returns the jobs of `pairs` whose score has passed `now` (all of them must be clearly past or clearly future). */
function pastScores(pairs: Pairs, now: number, what: string): Pairs {
  const out: Pairs = [];
  for (const p of pairs) {
    if (p[1] <= now) out.push(p);
    else assert(p[1] > now + AMBIGUOUS_MS, `${what} ${p[0]} has score ${p[1]}, ${p[1] - now} ms after now: neither tiny nor large`);
  }
  return out.sort(byScoreThenId);
}

// ---- the system under test and its checks ------------------------------------------------

/**
 * What the runs exercised, summed over the whole property. The common transitions must have
 * happened (asserted at the end); the rarer ones (RARE) are only logged.
 */
const RARE = new Set(['cancelledWaiting', 'dataUpdated', 'delayChanged', 'retriedDead', 'purgedDead', 'pausedLeases', 'rivalRefused', 'leasedRefused', 'forceRemoved', 'cleanedDead', 'linesTrimmed', 'cleanedSome', 'countTrimCapped', 'expiredLeaseSettled']);
const coverage = {
  leased: 0,
  acked: 0,
  nackRetried: 0,
  deadLettered: 0,
  requeued: 0,
  touched: 0,
  stalledBySweep: 0,
  promoted: 0,
  completedRemoved: 0,
  dedupForgotten: 0,
  duplicateAdds: 0,
  /** duplicates whose job was gone: only the idempotency window refused them */
  windowDuplicates: 0,
  staleRefused: 0,
  /** stale leases refused while their job was held by another lease */
  rivalRefused: 0,
  forgedRefused: 0,
  pausedLeases: 0,
  retriedDead: 0,
  purgedDead: 0,
  expiredLeaseSettled: 0,
  /** retryDead / purgeDead calls naming a dead id more than once */
  repeatedDeadIds: 0,
  /** nacks that followed a fixed backoff with a jitter */
  jitteredRetries: 0,
  /** leases of a job with a non-default jitter after a failure (its policy read back exactly) */
  jitterAfterFailure: 0,
  /** jobs listed by getJobs() and checked */
  pagedJobs: 0,
  /** management calls that had nothing to do or were refused, and changed nothing */
  noOps: 0,
  removed: 0,
  /** remove({ force: true }) of a leased job */
  forceRemoved: 0,
  /** remove() of a leased job without force: JobLeasedError */
  leasedRefused: 0,
  promotedByHand: 0,
  cancelledWaiting: 0,
  cancelledRunning: 0,
  retriedById: 0,
  dataUpdated: 0,
  delayChanged: 0,
  logsCleared: 0,
  /** changePriority of a pending job to another priority (it moves) */
  reprioritized: 0,
  /** changePriority of a delayed, working or dead job (kept for later) */
  priorityKept: 0,
  drained: 0,
  cleanedCompleted: 0,
  cleanedDead: 0,
  /** clean() calls that removed some of the jobs examined and stopped before the others */
  cleanedSome: 0,
  lifoAdds: 0,
  progressStored: 0,
  linesLogged: 0,
  /** log lines that pushed out the oldest one */
  linesTrimmed: 0,
  /** completed / dead jobs removed by a finished job's keepCompleted / keepDead count */
  countTrimmedCompleted: 0,
  countTrimmedDead: 0,
  /** calls whose trim RETENTION_STEP per job stopped short of the count */
  countTrimCapped: 0,
  /** adds that took a deduplication id */
  dedupTaken: 0,
  /** adds that met a held id: ignored (untilEnded, throttle), replaced (debounce) */
  dedupIgnored: 0,
  dedupThrottled: 0,
  dedupReplaced: 0,
  /** debounce: an add that met its running holder made a new job, which took the id */
  dedupAfterLease: 0,
  /** keepLastIfActive: adds kept while the holder ran, and kept adds added at its end */
  dedupDeferred: 0,
  keptAdded: 0,
  /** a held id freed by removeDeduplicationKey */
  dedupKeysRemoved: 0,
  /** changePriority with lifo of a pending job (to the head of its priority) */
  lifoReprioritized: 0,
  countsPerPriority: 0,
  /** jobs listed by getJobs([several states]) */
  multiStateJobs: 0,
};

let server: TestRedis;
let obs: Redis;
let queueCounter = 0;

class Env {
  readonly model = new Model();
  readonly q: Queue<Json, Json>;
  /** The Redis time after which every tiny score has run out. */
  horizon = 0;
  step = 0;
  readonly trace: string[] = [];
  /** True acks per job instance: at most one each. */
  private readonly trueAcks = new Map<number, number>();

  constructor() {
    this.q = new Queue<Json, Json>(`model${++queueCounter}`, { connection: server.url, prefix: uniquePrefix(), maxLogLines: MAX_LOG_LINES });
  }

  async close(): Promise<void> {
    await this.q.close();
  }

  /** Waits until the Redis clock is past every tiny score; returns that time. */
  async passHorizon(): Promise<number> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const now = await redisNow(obs);
      if (now > this.horizon) return now;
      assert(Date.now() < deadline, `the Redis clock did not pass ${this.horizon} within 10 s`);
      await sleep(Math.max(1, Math.min(20, this.horizon - now + 1)));
    }
  }

  /** Waits until the Redis clock is at `at` or later; returns that time. */
  async waitForClock(at: number): Promise<number> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const now = await redisNow(obs);
      if (now >= at) return now;
      assert(Date.now() < deadline, `the Redis clock did not reach ${at} within 10 s`);
      await sleep(Math.max(1, Math.min(20, at - now)));
    }
  }

  note(line: string): void {
    this.trace.push(`#${this.step} ${line}`);
  }

  /**
   * Before a call that may finish one of `jobs` with a retention count: the clock passes every
   * tiny score and every earlier completion and death, so that the jobs the call finishes are
   * the newest of their retention class (their scores are not known when the model trims).
   */
  async pastFinishes(jobs: Array<MJob | undefined>): Promise<void> {
    if (!jobs.some((j) => j && (j.keepCount !== undefined || j.deadCount !== undefined))) return;
    await this.passHorizon();
    const m = this.model;
    const finished = [...m.inState('completed').map((j) => j.completedAt!), ...m.inState('dead').map((j) => j.score!)];
    await this.waitForClock(Math.max(0, ...finished) + 1);
  }

  /** The jobs this step's call made from kept adds get their ids: the new records, by their deduplication id (meta dd). */
  async nameKeptJobs(): Promise<void> {
    const m = this.model;
    if (m.unnamed.length === 0) return;
    const records = await obs.hgetall(this.q.keys.byName.jobs);
    const fresh = Object.entries(records)
      .filter(([id]) => !m.jobs.has(id))
      .map(([id, rec]) => [id, (JSON.parse(rec.slice(0, rec.indexOf('\n'))) as { dd?: string }).dd] as const);
    same(fresh.map(([, dd]) => dd).sort(), m.unnamed.map((j) => j.dedupId).sort(), 'the jobs made from kept adds at their holders\' end (by deduplication id)');
    for (const job of m.unnamed.splice(0)) {
      const [id] = fresh.find(([, dd]) => dd === job.dedupId)!;
      this.note(`  kept add of ${fmt(job.dedupId)} added as ${id}`);
      m.rename(job, id);
      coverage.keptAdded += 1;
    }
  }

  /** The end of a step's call: the retention counts its finished jobs asked for. */
  async trimRetention(): Promise<void> {
    const m = this.model;
    if (!m.doneTrim && !m.deadTrim) return;
    const trimmed = m.trimRetention(await redisNow(obs));
    if (trimmed.completed + trimmed.dead > 0) this.note(`  retention by count: ${fmt(trimmed)}`);
    coverage.countTrimmedCompleted += trimmed.completed;
    coverage.countTrimmedDead += trimmed.dead;
    if (trimmed.capped) coverage.countTrimCapped += 1;
  }

  /** retry(id) of a completed job: it may complete once more. */
  forgetAcks(job: MJob): void {
    this.trueAcks.delete(job.instance);
  }

  countAck(job: MJob | undefined, ok: boolean): void {
    if (!ok || !job) return;
    const n = (this.trueAcks.get(job.instance) ?? 0) + 1;
    this.trueAcks.set(job.instance, n);
    assert(n === 1, `ack returned true ${n} times for job ${job.id}`);
  }

  snapshot(): Promise<Map<string, KeyValue>> {
    return snapshotQueue(obs, this.q);
  }

  /** Runs `op`, which must change nothing and return false (a stale or forged lease). */
  async unchanged(what: string, op: () => Promise<boolean | boolean[]>, expected: boolean | boolean[] = false, lease?: Lease<Json>): Promise<void> {
    if (what.includes('forged')) coverage.forgedRefused += 1;
    else coverage.staleRefused += 1;
    if (lease && this.model.jobs.get(lease.job.id)?.state === 'working') coverage.rivalRefused += 1;
    const full = await this.snapshot();
    const before = withoutReplayRecords(full, this.q);
    const ok = await op();
    same(ok, expected, `${what}: result`);
    const fullAfter = await this.snapshot();
    const after = withoutReplayRecords(fullAfter, this.q);
    same(after, before, `${what}: a stale or forged lease changed the queue's keys`);
    // a replay record it may have left says only "refused" (one 0 per item), and leased nothing
    for (const [key, kv] of fullAfter) {
      if (full.has(key) || !key.startsWith(`${this.q.keys.tag}:req:`)) continue;
      assert(kv.type === 'string' && /^0+$/.test(String(kv.value)), `${what}: left the replay record ${key} = ${JSON.stringify(kv.value)}`);
    }
  }

  /**
   * Runs `op`, which must answer `expected` (a value, or an error class it must throw) and
   * change nothing: a management call with nothing to do, or a refused one.
   */
  async noChange(what: string, op: () => Promise<unknown>, expected: unknown): Promise<void> {
    const before = withoutReplayRecords(await this.snapshot(), this.q);
    let got: unknown;
    try {
      got = await op();
    } catch (err) {
      got = err;
    }
    if (typeof expected === 'function') assert(got instanceof expected, `${what}: expected ${expected.name}, got ${got instanceof Error ? `${got.name}: ${got.message}` : fmt(got)}`);
    else same(got, expected, `${what}: result`);
    same(withoutReplayRecords(await this.snapshot(), this.q), before, `${what}: changed the queue's keys`);
    coverage.noOps += 1;
  }

  /** Every invariant, after every step. Also records observed scores into the model. */
  async check(): Promise<void> {
    const m = this.model;
    const q = this.q;
    const k = q.keys.byName;
    const now = await redisNow(obs);
    const snap = await this.snapshot();
    const val = <T>(key: string, type: string, empty: T): T => {
      const kv = snap.get(key);
      if (!kv) return empty;
      assert(kv.type === type, `${key} is a ${kv.type}, expected ${type}`);
      return kv.value as T;
    };
    // no keys beyond the data model (and lease replay records); a log list only for a job with lines
    const d = q.keys.derived;
    // d.cancelled, d.cancelWhy: the tokens of leases cancel() ended and their reasons, for their holders' touches (about a minute)
    const known = new Set<string>([...q.keys.all, d.progress, d.logged, d.ties, d.cancelled, d.cancelWhy, d.dedupIds, d.dedupTtl, d.dedupNext]);
    for (const job of m.jobs.values()) if (job.logs.length > 0) known.add(d.log(job.id));
    const tieDues = val<Pairs>(d.ties, 'zset', []).map(([due]) => Number(due));
    for (const due of tieDues) known.add(d.tie(due));
    for (const key of snap.keys()) {
      assert(known.has(key) || key.startsWith(`${q.keys.tag}:req:`), `unexpected key ${key}`);
    }
    const jobs = val<Record<string, string>>(k.jobs, 'hash', {});
    const pending = val<string[]>(k.pending, 'list', []);
    const prio = val<Pairs>(k.prio, 'zset', []);
    const delayed = val<Pairs>(k.delayed, 'zset', []);
    const working = val<Pairs>(k.working, 'zset', []);
    const leases = val<Record<string, string>>(k.leases, 'hash', {});
    const done = val<Pairs>(k.done, 'zset', []);
    const results = val<Record<string, string>>(k.results, 'hash', {});
    const dead = val<Pairs>(k.dead, 'zset', []);
    const dedup = val<Pairs>(k.dedup, 'zset', []);
    const meta = val<Record<string, string>>(k.meta, 'hash', {});
    const progress = val<Record<string, string>>(d.progress, 'hash', {});
    const logged = val<Record<string, string>>(d.logged, 'hash', {});

    // 1. no job in two states at once, no id twice in one structure
    const where = new Map<string, string>();
    const place = (id: string, s: string) => {
      assert(!where.has(id), `job ${id} is in ${where.get(id)} and in ${s} at once`);
      where.set(id, s);
    };
    pending.forEach((id) => place(id, 'pending'));
    prio.forEach(([id]) => place(id, 'prio'));
    delayed.forEach(([id]) => place(id, 'delayed'));
    working.forEach(([id]) => place(id, 'working'));
    done.forEach(([id]) => place(id, 'done'));
    dead.forEach(([id]) => place(id, 'dead'));
    // 2. the fence: a token for exactly the working jobs
    same(Object.keys(leases).sort(), working.map(([id]) => id).sort(), 'leases hash vs working zset');
    // 3. every record in exactly one state, every id in a state has its record
    for (const id of where.keys()) assert(id in jobs, `job ${id} is in ${where.get(id)} but has no record`);
    for (const id of Object.keys(jobs)) assert(where.has(id), `job ${id} has a record but is in no state (orphan)`);
    for (const id of Object.keys(results)) assert(where.get(id) === 'done', `result of ${id}, which is not completed`);
    // 4. attempts never exceed the limit
    for (const [id, rec] of Object.entries(jobs)) {
      const metaJson = JSON.parse(rec.slice(0, rec.indexOf('\n'))) as { a: number; f?: number; o?: number };
      const used = (metaJson.f ?? 0) - (metaJson.o ?? 0);
      assert(used <= metaJson.a, `job ${id} used ${used} attempts of ${metaJson.a}`);
      if (where.get(id) !== 'dead') assert(used < metaJson.a, `job ${id} is ${where.get(id)} with ${used} of ${metaJson.a} attempts used`);
    }
    // 5. a delayed job can never be missed by lease(): nextDue is at or before the earliest due
    if (delayed.length > 0) {
      const nextDue = Number(meta.nextDue);
      assert(meta.nextDue !== undefined && nextDue <= delayed[0]![1], `meta nextDue ${meta.nextDue} is after the earliest due ${delayed[0]![1]}`);
    }
    same(meta.paused !== undefined, m.paused, 'paused flag in meta');

    // 6. the raw structures are the model's
    same(Object.keys(jobs).sort(), [...m.jobs.keys()].sort(), 'job records vs model jobs');
    same(pending, m.pending, 'pending list (FIFO order)');
    same(prio.map(([id]) => id), m.prio.map((x) => x.id), 'prioritized jobs (order)');
    const idsIn = (state: State) => m.inState(state).map((j) => j.id).sort();
    same(delayed.map(([id]) => id).sort(), idsIn('delayed'), 'delayed jobs');
    // equal due times keep the order the jobs were delayed in: a due time that delayed jobs
    // share has a tie list holding exactly its ids in that order (one may stay after a removal)
    const atDue = new Map<number, MJob[]>();
    for (const [id, s] of delayed) atDue.set(s, [...(atDue.get(s) ?? []), m.jobs.get(id)!]);
    for (const [due, jobsThen] of atDue) if (jobsThen.length > 1) assert(tieDues.includes(due), `due time ${due} of ${jobsThen.length} jobs has no tie list`);
    for (const due of tieDues) {
      const expectedOrder = (atDue.get(due) ?? []).sort((a, b) => a.delayOrder! - b.delayOrder!).map((j) => j.id);
      same(val<string[]>(d.tie(due), 'list', []), expectedOrder, `tie list of due time ${due}`);
    }
    same(
      [...working].sort(byScoreThenId),
      m.inState('working').map((j): [string, number] => [j.id, j.deadline!]).sort(byScoreThenId),
      'working jobs and their deadlines',
    );
    for (const j of m.inState('working')) same(leases[j.id], j.token, `token of working job ${j.id}`);
    same(done.map(([id]) => id).sort(), idsIn('completed'), 'completed jobs');
    same(dead.map(([id]) => id).sort(), idsIn('dead'), 'dead jobs');
    same(dedup.map(([id]) => id).sort(), [...m.dedup.keys()].sort(), 'idempotency windows');
    // deduplication id -> mode and the id of the job that holds it: held ids only (an end releases its id in the same call)
    const dedupIds = val<Record<string, string>>(d.dedupIds, 'hash', {});
    same(
      Object.entries(dedupIds).map(([did, v]) => [did, v.slice(1)]),
      [...m.holders].map(([did, h]) => [did, h.job]).sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0)),
      'held deduplication ids and their jobs (raw)',
    );
    // progress and log lines: written by current leases only, kept across attempts, gone with the job
    same(
      Object.fromEntries(Object.entries(progress).map(([id, json]) => [id, JSON.parse(json) as Json])),
      Object.fromEntries([...m.jobs.values()].filter((j) => j.progress !== undefined).map((j) => [j.id, j.progress])),
      'stored progress',
    );
    // the mark of a job's last line stays when clearLogs() removes its lines
    same(Object.keys(logged).sort(), [...m.jobs.values()].filter((j) => j.logToken !== undefined).map((j) => j.id).sort(), 'jobs with a logged line');
    for (const job of m.jobs.values()) {
      if (job.logToken === undefined) continue;
      same(val<string[]>(d.log(job.id), 'list', []), job.logs, `log lines of ${job.id} (the last ${MAX_LOG_LINES})`);
      const last = /^(\d+) (\S+) (.*)$/s.exec(logged[job.id]!);
      same(last?.[3], job.logToken, `the lease token of the last log line of ${job.id}`);
    }

    // observed scores, and the horizon of the tiny ones
    for (const [id, s] of [...delayed, ...done, ...dead]) m.jobs.get(id)!.score = s;
    for (const [id, s] of dedup) m.dedup.set(id, s);
    for (const [what, pairs] of [['lease deadline', working], ['due time', delayed], ['retention end', done], ['idempotency window', dedup]] as const) {
      for (const [id, s] of pairs) {
        if (s <= now + TINY_SLACK_MS) this.horizon = Math.max(this.horizon, s);
        else assert(s > now + AMBIGUOUS_MS, `${what} of ${id} is ${s - now} ms from now: neither tiny nor large`);
      }
    }
    for (const [id, s] of done) {
      const job = m.jobs.get(id)!;
      const completedAt = (JSON.parse(results[id]!) as { at: number }).at;
      same(s - completedAt, job.keepMs, `retention of completed job ${id}`);
      job.completedAt = completedAt;
    }

    // 7. the public API agrees. A completed job past its retention is not reported, swept or
    // not; one whose retention ends while the read runs may go either way.
    const countsFrom = await redisNow(obs);
    const counts = await q.counts();
    const countsTo = await redisNow(obs);
    const completedJobs = m.inState('completed');
    const retained = completedJobs.filter((j) => j.score! > countsTo).length;
    const ending = completedJobs.filter((j) => j.score! > countsFrom && j.score! <= countsTo).length;
    assert(
      counts.completed >= retained && counts.completed <= retained + ending,
      `counts().completed is ${counts.completed}: expected ${retained}${ending ? ` to ${retained + ending}` : ''} (jobs within their retention)`,
    );
    same(
      counts,
      {
        pending: m.pending.length + m.prio.length,
        working: m.inState('working').length,
        delayed: m.inState('delayed').length,
        completed: counts.completed,
        dead: m.inState('dead').length,
        paused: m.paused,
        ghosts: 0, // queued ids without a record: never, without eviction
        rateLimitedMs: 0, // no limiter in the model
        rateLimitedGroups: 0,
        waitingChildren: 0, // no flows in the model
      },
      'counts()',
    );
    const expired = completedJobs.length - counts.completed; // past their retention, not swept yet
    same(counts.pending + counts.working + counts.delayed + counts.completed + counts.dead + expired, Object.keys(jobs).length, 'counts add up to the live jobs');
    const listed = await q.listDead({ limit: 10_000 });
    same(
      listed.map((d) => d.id),
      [...dead].sort(byScoreThenId).map(([id]) => id),
      'listDead(): every dead job, oldest first',
    );
    for (const d of listed) {
      const job = m.jobs.get(d.id)!;
      const expected: Record<string, unknown> = { id: d.id, name: job.name, data: job.data, failures: job.f, diedAt: job.score };
      if (job.e !== undefined) expected.lastError = job.e;
      same(d, expected, `listDead() entry ${d.id}`);
    }
    const ids = [...m.jobs.keys(), ...[...m.gone].slice(-5)];
    const readFrom = await redisNow(obs);
    const infos = await Promise.all(ids.map((id) => q.getJob(id)));
    const readTo = await redisNow(obs);
    ids.forEach((id, i) => {
      const job = m.jobs.get(id);
      const info = infos[i]!;
      const pastRetention = job?.state === 'completed' && job.score! <= readFrom;
      const endingRetention = job?.state === 'completed' && job.score! > readFrom && job.score! <= readTo;
      if (!job || pastRetention) {
        same(info, null, `getJob(${id}) of a job that is gone${pastRetention ? ' (completed, past its retention)' : ''}`);
        return;
      }
      if (endingRetention && info === null) return;
      same(info === null ? null : jobView(info, true), expectedView(job, true), `getJob(${id})`);
    });
    const holders = await Promise.all(DEDUP_IDS.map((did) => q.getDeduplicationJobId(did)));
    same(
      Object.fromEntries(DEDUP_IDS.map((did, i) => [did, holders[i]])),
      Object.fromEntries(DEDUP_IDS.map((did) => [did, m.holders.get(did)?.job ?? null])),
      'getDeduplicationJobId() of every deduplication id',
    );

    // 8. getJobs(): every state in the model's order, both ways (and whatever page a GetJobsCmd
    // asks); the reads at once (nothing writes meanwhile: each is checked within its own read)
    await Promise.all(
      JOB_STATES.map(async (state) => {
        const [asc, desc] = await Promise.all([
          this.expectPage(state, () => q.getJobs(state)),
          this.expectPage(state, () => q.getJobs(state, { start: 0, end: 9_999, order: 'desc' }), 'desc'),
        ]);
        // the same jobs both ways, unless a retention ended between the two reads
        if (state !== 'completed') same([...desc].reverse(), asc, `getJobs('${state}', desc) is the reverse of asc`);
      }),
    );
  }

  /** The jobs of `state` in the model's asc order (completed: past their retention too). */
  inOrder(state: PageState): MJob[] {
    const m = this.model;
    if (state === 'pending') return m.leaseOrder().map((id) => m.jobs.get(id)!);
    if (state === 'waiting-children') return []; // no flows in the model
    const score = (j: MJob): number => (state === 'working' ? j.deadline! : j.score!);
    return m.inState(state).sort((a, b) => byScoreThenId([a.id, score(a)], [b.id, score(b)]));
  }

  /**
   * The jobs of `state` in the model's asc order: lease order for pending, by (score, id) for
   * the others (completed: within their retention). A completed job whose retention ends
   * while `read` runs may be listed or not: they are a prefix of the asc order.
   */
  async expectPage(state: PageState, read: () => Promise<Array<JobInfo<Json, Json>>>, order: 'asc' | 'desc' = 'asc', start = 0, end = 9_999): Promise<string[]> {
    let all = this.inOrder(state);
    const readFrom = await redisNow(obs);
    const page = await read();
    const readTo = await redisNow(obs);
    const what = `getJobs('${state}', { start: ${start}, end: ${end}, order: '${order}' })`;
    if (state === 'completed') {
      all = all.filter((j) => j.score! > readFrom);
      // those whose retention ended during the read are left out (a prefix of asc), or not
      const listed = new Set(page.map((i) => i.id));
      let skip = 0;
      while (skip < all.length && all[skip]!.score! <= readTo && !listed.has(all[skip]!.id)) skip += 1;
      all = all.slice(skip);
    }
    const ordered = order === 'asc' ? all : [...all].reverse();
    const expected = ordered.slice(start, end + 1);
    same(
      page.map((i) => i.id),
      expected.map((j) => j.id),
      `${what}: ids`,
    );
    page.forEach((info, i) => same(jobView(info, false), expectedView(expected[i]!, false), `${what}: job ${info.id}`));
    coverage.pagedJobs += page.length;
    return page.map((i) => i.id);
  }
}

/** The states getJobs() takes. */
const JOB_STATES = ['pending', 'working', 'delayed', 'completed', 'dead', 'waiting-children'] as const;
type PageState = (typeof JOB_STATES)[number];

/** The fields of JobInfo the model predicts (`notes`: getJob's progress and logs; getJobs has neither). */
function jobView(info: JobInfo<Json, Json>, notes: boolean): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: info.id,
    name: info.name,
    state: info.state,
    data: info.data,
    priority: info.priority,
    failures: info.failures,
    maxAttempts: info.maxAttempts,
    dequeues: info.dequeues,
    requeues: info.requeues,
    lastError: info.lastError,
    result: info.result,
    deduplicationId: info.deduplicationId,
  };
  if (info.state === 'working') v.leaseDeadline = info.leaseDeadline;
  if (info.state === 'delayed') v.runAt = info.runAt;
  if (info.state === 'dead') v.diedAt = info.diedAt;
  if (info.state === 'completed') v.retainedUntil = info.retainedUntil;
  if (info.state === 'completed') v.completedAt = info.completedAt;
  v.progress = info.progress;
  v.logs = info.logs;
  if (!notes) assert(!('progress' in info) && !('logs' in info), `getJobs() lists ${info.id} with progress or logs`);
  return v;
}

function expectedView(job: MJob, notes: boolean): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: job.id,
    name: job.name,
    state: job.state,
    data: job.data,
    priority: job.priority,
    failures: job.f,
    maxAttempts: job.attempts,
    dequeues: job.leased,
    requeues: job.r,
    lastError: job.e,
    result: job.state === 'completed' ? (job.result ?? undefined) : undefined,
    deduplicationId: job.dedupId,
  };
  if (job.state === 'working') v.leaseDeadline = job.deadline;
  if (job.state === 'delayed') v.runAt = job.score;
  if (job.state === 'dead') v.diedAt = job.score;
  if (job.state === 'completed') v.retainedUntil = job.score;
  if (job.state === 'completed') v.completedAt = job.completedAt;
  v.progress = notes ? job.progress : undefined;
  v.logs = notes ? job.logs : undefined;
  return v;
}

// ---- generators ------------------------------------------------------------------------

interface JobOpts {
  jobId?: string;
  name?: string;
  priority?: number;
  delayMs?: number;
  attempts?: number;
  leaseMs?: number;
  keepCompletedMs?: number;
  /** With a count: given instead of keepCompletedMs (giving both is a ValidationError). */
  keepCompleted?: { count: number; ageMs?: number };
  keepDead?: { count: number };
  dedupWindowMs?: number;
  backoff?: number | { type: 'fixed'; delayMs: number; jitter: number };
  lifo?: boolean;
  deduplication?: DedupOpts;
}

type DedupMode = 'untilEnded' | 'throttle' | 'debounce';
/** Throttles are LARGE only (their window never ends within a run). */
interface DedupOpts {
  id: string;
  mode?: DedupMode;
  ttlMs?: number;
  keepLastIfActive?: boolean;
}

interface AddItem {
  data: Json;
  opts?: JobOpts;
}

const tinyMs = fc.integer({ min: 1, max: 4 });
/** Retention counts: small, so that trims happen. */
const countArb = fc.integer({ min: 1, max: 3 });
const rareCount = fc.oneof({ weight: 1, arbitrary: countArb }, { weight: 3, arbitrary: fc.constant(undefined) });
/**
 * keepCompleted with a count; its age 0, LARGE or the default, never tiny: a job with a count
 * is the newest of its retention class when it completes (Env.pastFinishes), so the model
 * knows its place among the completed jobs before its score is read.
 */
function withCount(keepMs: number | undefined, count: number): { count: number; ageMs?: number } {
  return keepMs === 0 || keepMs === LARGE_MS ? { count, ageMs: keepMs } : { count };
}
/** The shortest leases there are (a leaseMs is at least 10). */
const shortLeaseMs = fc.integer({ min: 10, max: 14 });
/** Jitters: none, or any double in [0, 1] (they must survive every failure bit for bit). */
const jitterArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant(0) },
  { weight: 2, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map((x) => x + 0) }, // + 0: no -0
  { weight: 1, arbitrary: fc.constantFrom(1 / 3, 0.1 + 0.2, 1, Number.MIN_VALUE, 1 - Number.EPSILON / 2) },
);
const jsonData: fc.Arbitrary<Json> = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
  fc.constant(null),
  fc.record({ n: fc.integer(), s: fc.string({ maxLength: 4 }), l: fc.array(fc.boolean(), { maxLength: 3 }) }),
);
/** A few custom ids (so they collide), with characters that are legal in ids. */
const JOB_IDS = ['job:1', 'job*2', 'job 3', 'jöb-4', '{job}5', '🦄'];
const jobOpts: fc.Arbitrary<JobOpts> = fc.record(
  {
    jobId: fc.constantFrom(...JOB_IDS),
    name: fc.constantFrom('a', 'ü:*'),
    priority: fc.constantFrom(0, 5, -5, 1000, -1000),
    delayMs: fc.oneof(fc.constant(0), tinyMs, fc.constant(LARGE_MS)),
    attempts: fc.integer({ min: 1, max: 3 }),
    leaseMs: fc.oneof(shortLeaseMs, fc.constant(LARGE_MS)),
    keepCompletedMs: fc.oneof(fc.constant(0), tinyMs, tinyMs, fc.constant(LARGE_MS)),
    dedupWindowMs: fc.oneof(fc.constant(0), tinyMs, tinyMs, fc.constant(LARGE_MS)),
    backoff: fc.oneof(fc.constant(0), fc.tuple(tinyMs, jitterArb).map(([d, jitter]) => ({ type: 'fixed' as const, delayMs: d, jitter }))),
    lifo: fc.boolean(),
    // rarer than the other options: a count trims the queue's finished jobs for every job
    keepCount: rareCount,
    deadCount: rareCount,
  },
  { requiredKeys: [] },
).map(({ keepCount, deadCount, ...rest }) => {
  const o: JobOpts = rest;
  // lifo is for jobs pending now (with a delay it is a ValidationError, the fuzz test's business)
  if (o.lifo && (o.delayMs ?? 0) > 0) delete o.lifo;
  if (deadCount !== undefined) o.keepDead = { count: deadCount };
  if (keepCount !== undefined) o.keepCompleted = withCount(o.keepCompletedMs, keepCount);
  if (keepCount !== undefined) delete o.keepCompletedMs;
  return o;
});
const addItem: fc.Arbitrary<AddItem> = fc.record({ data: jsonData, opts: fc.option(jobOpts, { nil: undefined }) }, { requiredKeys: ['data'] });
/** A few deduplication ids (so they collide). */
const DEDUP_IDS = ['dd:1', 'dd*2', 'dd 3'];
/** Every mode, given or by default (throttle: a LARGE window), with keepLastIfActive or not. */
const dedupArb = (ids: string[]): fc.Arbitrary<DedupOpts> =>
  fc
    .tuple(fc.constantFrom(...ids), fc.constantFrom('untilEnded', 'throttle', 'debounce', 'debounce', 'default', 'defaultTtl'), fc.boolean())
    .map(([id, mode, keep]): DedupOpts => {
      if (mode === 'defaultTtl') return { id, ttlMs: LARGE_MS };
      if (mode === 'throttle') return { id, mode, ttlMs: LARGE_MS };
      const d: DedupOpts = mode === 'default' ? { id } : { id, mode: mode as DedupMode };
      if (keep) d.keepLastIfActive = true; // untilEnded and debounce only
      return d;
    });
/** Adds with a deduplication id (no jobId: that key is the idempotency tests'). */
const dedupItem: fc.Arbitrary<AddItem> = fc.record({
  data: jsonData,
  opts: fc.record(
    {
      deduplication: dedupArb(DEDUP_IDS),
      delayMs: fc.oneof(fc.constant(0), tinyMs, fc.constant(LARGE_MS)),
      priority: fc.constantFrom(0, 5, -5),
      attempts: fc.integer({ min: 1, max: 2 }),
      keepCompletedMs: fc.constantFrom(0, LARGE_MS),
    },
    { requiredKeys: ['deduplication'] },
  ),
});
/** Idempotency keys whose job is soon gone (kept 0 or a tiny while) but whose window stays open (or not). */
const idempotentItem: fc.Arbitrary<AddItem> = fc.record({
  data: jsonData,
  opts: fc.record({
    jobId: fc.constantFrom(...JOB_IDS.slice(0, 3)),
    keepCompletedMs: fc.oneof(fc.constant(0), tinyMs),
    dedupWindowMs: fc.oneof(fc.constant(LARGE_MS), fc.constant(LARGE_MS), tinyMs, fc.constant(0)),
    attempts: fc.integer({ min: 1, max: 2 }),
  }),
});
/**
 * A lease to act on: an index into the current leases (live), else (rival) into the stale
 * leases of jobs that are working again under another lease (the fencing case: an old holder
 * acting on a job someone else holds now), else into every lease ever made.
 */
const leaseRef = fc.record({ n: fc.nat(), live: fc.boolean(), rival: fc.boolean() });
type LeaseRef = { n: number; live: boolean; rival?: boolean; newest?: boolean; back?: number };

function pickLease(m: Model, ref: LeaseRef): Lease<Json> | undefined {
  if (ref.newest) return m.leases[m.leases.length - 1];
  if (ref.back !== undefined) return m.leases[m.leases.length - 1 - ref.back];
  const live = m.liveLeases();
  let from = m.leases;
  if (ref.live && live.length > 0) from = live;
  else if (ref.rival) {
    const rivals = m.leases.filter((l) => !m.isCurrent(l) && m.jobs.get(l.job.id)?.state === 'working');
    if (rivals.length > 0) from = rivals;
  }
  return from.length ? from[ref.n % from.length] : undefined;
}

function fmt(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (x === undefined ? 'undefined' : x));
}

// ---- commands ----------------------------------------------------------------------------

type Cmd = fc.AsyncCommand<Model, Env>;

abstract class Base implements Cmd {
  check(): boolean {
    return true;
  }
  async run(_m: Model, env: Env): Promise<void> {
    env.step += 1;
    env.note(this.toString());
    try {
      await this.exec(env.model, env);
      await env.nameKeptJobs();
      await env.trimRetention();
      await env.check();
    } catch (err) {
      if (err instanceof Error) err.message = `step #${env.step} ${this.toString()}: ${err.message}\ntrace:\n  ${env.trace.slice(-12).join('\n  ')}`;
      throw err;
    }
  }
  protected abstract exec(m: Model, env: Env): Promise<void>;
  abstract toString(): string;
  /** The step without its check (for MacroCmd). */
  execStep(m: Model, env: Env): Promise<void> {
    return this.exec(m, env);
  }
}

class AddCmd extends Base {
  constructor(
    readonly items: AddItem[],
    readonly bulk: boolean,
  ) {
    super();
  }
  toString(): string {
    return this.bulk ? `addBulk(${fmt(this.items)})` : `add(${fmt(this.items[0]!.data)}, ${fmt(this.items[0]!.opts)})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const now = await env.passHorizon(); // tiny idempotency windows have ended
    const q = env.q;
    // JobOptions types `backoff` as an object; a number (fixed ms) is documented and accepted.
    const items = this.items as Array<BulkJob<Json>>;
    // an add that meets a held deduplication id and is ignored writes nothing
    const before = !this.bulk && items[0]!.opts?.deduplication ? withoutReplayRecords(await env.snapshot(), q) : undefined;
    const results = this.bulk ? await q.addBulk(items) : [await q.add(items[0]!.data, items[0]!.opts)];
    same(results.length, this.items.length, 'one result per job');
    if (before && results[0]!.deduplicated === 'ignored') same(withoutReplayRecords(await env.snapshot(), q), before, `an ignored add changed the queue's keys`);
    const tail: MJob[] = [];
    this.items.forEach((item, i) => {
      const r = results[i]!;
      const custom = item.opts?.jobId;
      const dedup = item.opts?.deduplication;
      // each job of the call in order: the ones before it are in place when it meets its id
      if (dedup) for (const job of tail.splice(0)) m.makePending(job);
      const h = dedup && m.holders.get(dedup.id);
      const holder = h && m.jobs.get(h.job);
      const running = h !== undefined && h.mode !== 'throttle' && holder?.state === 'working';
      if (dedup && h && !(running && h.mode === 'debounce' && !dedup.keepLastIfActive)) {
        // held: kept for the end of a running holder (keepLastIfActive); a debounce holder that
        // waits (pending or delayed) takes this add's data and due time; otherwise ignored
        const outcome = running && dedup.keepLastIfActive ? 'deferred' : h.mode === 'debounce' ? 'replaced' : 'ignored';
        same(r, { id: h.job, created: false, deduplicated: outcome }, `add with deduplication id ${fmt(dedup.id)} held by ${h.job} (${h.mode}, ${holder?.state ?? 'gone'})`);
        if (outcome === 'deferred') {
          h.kept = item; // in place of any kept before
          coverage.dedupDeferred += 1;
          return;
        }
        const replaced = outcome === 'replaced';
        if (!replaced) {
          if (h.mode === 'throttle') coverage.dedupThrottled += 1;
          else coverage.dedupIgnored += 1;
          return;
        }
        coverage.dedupReplaced += 1;
        h.kept = undefined; // an add kept while it ran before is older than this one
        const job = holder!;
        job.data = item.data;
        const delayed = (item.opts?.delayMs ?? 0) > 0;
        if (job.state === 'delayed') {
          if (delayed) m.makeDelayed(job);
          else m.makePending(job);
        } else if (delayed) {
          // pending: it waits for its new due time
          m.unqueue(job);
          m.makeDelayed(job);
        }
        return;
      }
      if (dedup && h) coverage.dedupAfterLease += 1;
      if (custom !== undefined) {
        same(r.id, custom, 'the id of a job with a jobId');
        const window = m.dedup.get(custom);
        const open = window !== undefined && window > now;
        const dup = m.jobs.has(custom) || open;
        same(r.created, !dup, `created flag of ${custom} (exists: ${m.jobs.has(custom)}, idempotency window open: ${open})`);
        if (dup) {
          coverage.duplicateAdds += 1;
          if (!m.jobs.has(custom)) coverage.windowDuplicates += 1;
          return;
        }
      } else {
        assert(r.created && !m.jobs.has(r.id) && !m.gone.has(r.id), `generated id ${r.id} is new`);
      }
      const job = m.create(r.id, custom !== undefined, item.data, item.opts);
      if (dedup) {
        same(r.deduplicated, undefined, `AddResult.deduplicated of ${r.id}, which took ${fmt(dedup.id)}`);
        m.holders.set(dedup.id, { job: job.id, mode: modeOf(dedup) });
        coverage.dedupTaken += 1;
      }
      if ((item.opts?.delayMs ?? 0) > 0) m.makeDelayed(job);
      else if (item.opts?.lifo) {
        // at the head of its priority at once; the call's other pending jobs join the tail after the loop
        m.makePending(job, true);
        coverage.lifoAdds += 1;
      } else tail.push(job);
    });
    for (const job of tail) m.makePending(job);
    env.note(`  -> ${fmt(results)}`);
  }
}

/** Several commands as one step of the sequence (each still checked against the model). */
class MacroCmd extends Base {
  constructor(
    readonly label: string,
    readonly steps: Base[],
  ) {
    super();
  }
  toString(): string {
    return `${this.label}[${this.steps.map((c) => c.toString()).join('; ')}]`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    for (const [i, c] of this.steps.entries()) {
      env.note(`  ${this.label} ${i + 1}/${this.steps.length}: ${c.toString()}`);
      await c.execStep(m, env);
      await env.nameKeptJobs();
      await env.trimRetention();
      if (i < this.steps.length - 1) await env.check();
    }
  }
}

class LeaseCmd extends Base {
  constructor(
    readonly count: number,
    readonly leaseMs: number,
  ) {
    super();
  }
  toString(): string {
    return `lease({ count: ${this.count}, leaseMs: ${this.leaseMs}, blockMs: 0 })`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const now = await env.passHorizon();
    let expected: string[] = [];
    if (!m.paused) {
      for (const job of m.dueJobs(now)) m.makePending(job);
      expected = m.take(this.count);
    }
    const leases = await env.q.lease({ count: this.count, leaseMs: this.leaseMs, blockMs: 0 });
    if (m.paused) coverage.pausedLeases += 1;
    coverage.leased += leases.length;
    env.note(`  -> ${fmt(leases.map((l) => [l.job.id, l.token]))}`);
    same(
      leases.map((l) => l.job.id),
      expected,
      m.paused ? 'a paused queue leases nothing' : 'leased jobs, in order (priority > 0, FIFO, priority < 0)',
    );
    for (const l of leases) {
      const job = m.jobs.get(l.job.id)!;
      assert(!m.tokens.has(l.token), `token ${l.token} was handed out before`);
      m.tokens.add(l.token);
      const expectedJob: Record<string, unknown> = {
        id: job.id,
        name: job.name,
        data: job.data,
        attempt: job.f - job.o + 1,
        maxAttempts: job.attempts,
        priority: job.priority,
        requeues: job.r,
      };
      if (job.e !== undefined) expectedJob.lastError = job.e;
      same(l.job, expect.objectContaining(expectedJob), `leased job ${job.id}`);
      assert(l.job.attempt <= l.job.maxAttempts, `leased job ${job.id} on attempt ${l.job.attempt} of ${l.job.maxAttempts}`);
      same(l.deadline - l.job.leasedAt, job.leaseMs ?? this.leaseMs, `lease length of ${job.id}`);
      same(l.leaseMs, job.leaseMs ?? this.leaseMs, `lease.leaseMs of ${job.id}`);
      const policy: Record<string, unknown> = { attempts: job.attempts, backoff: job.backoff, keepCompletedMs: job.keepMs, dedupWindowMs: job.dedupMs };
      if (job.leaseMs !== undefined) policy.leaseMs = job.leaseMs;
      if (job.keepCount !== undefined) policy.keepCompletedCount = job.keepCount;
      if (job.deadCount !== undefined) policy.keepDeadCount = job.deadCount;
      // toEqual tells -0 from 0 and compares doubles bit for bit: a jitter must survive every failure exactly
      same(l.job.policy, policy, `policy of leased job ${job.id} (after ${job.f} failures)`);
      if (job.f > 0 && job.backoff.jitter !== 0 && job.backoff.jitter !== DEFAULT_BACKOFF.jitter) coverage.jitterAfterFailure += 1;
      job.state = 'working';
      job.token = l.token;
      job.deadline = l.deadline;
      job.leased += 1;
      m.leases.push(l);
    }
  }
}

type SettleKind = 'ack' | 'nack' | 'requeue' | 'reject';

class SettleCmd extends Base {
  constructor(
    readonly kind: SettleKind,
    readonly ref: LeaseRef,
    /** ack: the result; nack: the error text; reject: the reason */
    readonly payload: Json | undefined,
    /** nack / requeue: 'backoff' = no delayMs given */
    readonly delay: number | 'backoff',
  ) {
    super();
  }
  toString(): string {
    return `${this.kind}(lease ${fmt(this.ref)}, ${fmt(this.payload)}${this.kind === 'nack' || this.kind === 'requeue' ? `, delay ${this.delay}` : ''})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const lease = pickLease(m, this.ref);
    if (!lease) return;
    const q = env.q;
    const job = m.jobs.get(lease.job.id);
    let delay = this.delay;
    // Without delayMs a nack uses the job's backoff: only when that is fixed (the default
    // exponential one is ~1 s with jitter, neither tiny nor large). A fixed one with a jitter
    // draws its delay in [d(1 - j), d(1 + j)], rounded: still tiny, but maybe 0 (pending).
    let jittered: { delayMs: number; jitter: number } | undefined;
    if (delay === 'backoff' && this.kind === 'nack') {
      const b = lease.job.policy.backoff;
      if (b.type !== 'fixed') delay = 0;
      else if ((b.jitter ?? 0) !== 0) jittered = { delayMs: b.delayMs, jitter: b.jitter! };
    }
    const delayOpt = delay === 'backoff' ? {} : { delayMs: delay };
    const call = (): Promise<boolean> => {
      switch (this.kind) {
        case 'ack':
          return q.ack(lease, this.payload ?? undefined);
        case 'nack':
          return q.nack(lease, { error: String(this.payload), ...delayOpt });
        case 'requeue':
          return q.requeue(lease, { ...delayOpt, reason: 'model' });
        case 'reject':
          return q.reject(lease, String(this.payload));
      }
    };
    if (!m.isCurrent(lease)) {
      env.note(`  stale lease ${lease.job.id} ${lease.token}`);
      await env.unchanged(`${this.kind} with a stale lease`, call, false, lease);
      return;
    }
    if (this.kind !== 'requeue') await env.pastFinishes([job]);
    const t0 = await redisNow(obs);
    if (lease.deadline <= t0) coverage.expiredLeaseSettled += 1;
    const ok = await call();
    same(ok, true, `${this.kind} with the current lease of ${lease.job.id}`);
    if (this.kind === 'ack') env.countAck(job, ok);
    if (jittered && job!.f + 1 - job!.o < job!.attempts) {
      // retried: the random delay is observed (delayed, due within the jitter's range, or 0: pending)
      const info = await q.getJob(job!.id);
      const t1 = await redisNow(obs);
      const most = Math.round(jittered.delayMs * (1 + jittered.jitter));
      if (info?.state === 'delayed') {
        assert(info.runAt! >= t0 + 1 && info.runAt! <= t1 + most, `jittered retry of ${job!.id} due at ${info.runAt}, not within [${t0 + 1}, ${t1 + most}]`);
        delay = 1;
      } else {
        same(info?.state, 'pending', `state of ${job!.id} after a nack with a jittered backoff`);
        delay = 0;
      }
      coverage.jitteredRetries += 1;
    }
    applySettle(m, job!, this.kind, this.payload, delay);
  }
}

function applySettle(m: Model, job: MJob, kind: SettleKind, payload: Json | undefined, delay: number | 'backoff'): void {
  m.endLease(job);
  if (kind === 'ack') coverage.acked += 1;
  if (kind === 'requeue') coverage.requeued += 1;
  // no delayMs: a nack follows the job's (fixed) backoff, a requeue is immediate
  const ms = delay !== 'backoff' ? delay : kind === 'nack' ? job.fixedBackoff! : 0;
  switch (kind) {
    case 'ack':
      m.complete(job, payload ?? undefined);
      return;
    case 'nack':
      m.fail(job, String(payload), ms);
      if (job.state === 'dead') coverage.deadLettered += 1;
      else coverage.nackRetried += 1;
      return;
    case 'requeue':
      job.r += 1;
      if (ms > 0) m.makeDelayed(job);
      else m.makePending(job);
      return;
    case 'reject':
      job.f += 1;
      job.e = String(payload);
      m.kill(job);
      coverage.deadLettered += 1;
  }
}

class AckTwiceCmd extends Base {
  constructor(
    readonly ref: LeaseRef,
    readonly batch: boolean,
  ) {
    super();
  }
  toString(): string {
    return `${this.batch ? 'ackBatch([l, l])' : 'ack(l) twice'} (lease ${fmt(this.ref)})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const lease = pickLease(m, { ...this.ref, live: true });
    if (!lease) return;
    const job = m.jobs.get(lease.job.id);
    const current = m.isCurrent(lease);
    if (current) await env.pastFinishes([job]);
    if (this.batch) {
      if (!current) return env.unchanged('ackBatch([stale, stale])', () => env.q.ackBatch([lease, lease]), [false, false]);
      const ok = await env.q.ackBatch([lease, { lease, result: 'second' }]);
      same(ok, [true, false], 'ackBatch with the same lease twice: the first settles, the second is refused');
      env.countAck(job, true);
    } else {
      if (!current) return env.unchanged('ack(stale)', () => env.q.ack(lease));
      same(await env.q.ack(lease, 'first'), true, 'first ack of a current lease');
      env.countAck(job, true);
      applySettle(m, job!, 'ack', 'first', 0);
      await env.unchanged('the second ack of the same lease', () => env.q.ack(lease, 'second'));
      return;
    }
    applySettle(m, job!, 'ack', null, 0);
  }
}

/** ackBatch over several leases: live, stale, and the same one twice. */
class AckBatchCmd extends Base {
  constructor(readonly refs: Array<LeaseRef & { result: boolean }>) {
    super();
  }
  toString(): string {
    return `ackBatch(leases ${fmt(this.refs)})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const picked = this.refs.flatMap((r) => {
      const l = pickLease(m, r);
      return l ? [{ lease: l, result: r.result }] : [];
    });
    if (!picked.length) return;
    const seen = new Set<string>();
    const expected = picked.map(({ lease }) => {
      // the first item with the current token wins; stale items do not count
      const ok = m.isCurrent(lease) && !seen.has(lease.job.id);
      if (ok) seen.add(lease.job.id);
      return ok;
    });
    const arg = picked.map(({ lease, result }) => (result ? { lease, result: `r:${lease.job.id}` } : lease));
    await env.pastFinishes(picked.filter((_, i) => expected[i]).map(({ lease }) => m.jobs.get(lease.job.id)));
    if (!expected.some(Boolean)) return env.unchanged('ackBatch with only stale leases', () => env.q.ackBatch(arg), expected);
    const ok = await env.q.ackBatch(arg);
    same(ok, expected, 'ackBatch: true for each current lease, once per job');
    picked.forEach(({ lease, result }, i) => {
      if (!ok[i]) return;
      const job = m.jobs.get(lease.job.id)!;
      env.countAck(job, true);
      applySettle(m, job, 'ack', result ? `r:${lease.job.id}` : null, 0);
    });
  }
}

class TouchCmd extends Base {
  constructor(
    readonly ref: LeaseRef,
    readonly extendMs: number | undefined,
  ) {
    super();
  }
  toString(): string {
    return `touch(lease ${fmt(this.ref)}, ${this.extendMs})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const lease = pickLease(m, this.ref);
    if (!lease) return;
    if (!m.isCurrent(lease)) {
      const deadline = lease.deadline;
      await env.unchanged('touch with a stale lease', () => env.q.touch(lease, this.extendMs), false, lease);
      same(lease.deadline, deadline, 'a refused touch leaves lease.deadline alone');
      return;
    }
    const ext = this.extendMs ?? lease.leaseMs;
    const t0 = await redisNow(obs);
    same(await env.q.touch(lease, this.extendMs), true, `touch of the current lease of ${lease.job.id} (expired or not: valid until swept)`);
    const t1 = await redisNow(obs);
    assert(lease.deadline >= t0 + ext && lease.deadline <= t1 + ext, `touched deadline ${lease.deadline} not within [${t0 + ext}, ${t1 + ext}]`);
    m.jobs.get(lease.job.id)!.deadline = lease.deadline;
    coverage.touched += 1;
  }
}

class SweepCmd extends Base {
  constructor(readonly limit: number | undefined) {
    super();
  }
  toString(): string {
    return `sweep(${this.limit === undefined ? '' : `{ limit: ${this.limit} }`})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    await env.pastFinishes(m.inState('working'));
    const now = await env.passHorizon();
    const limit = this.limit ?? 1000;
    const expired = pastScores(m.inState('working').map((j) => [j.id, j.deadline!]), now, 'lease deadline').slice(0, limit);
    const due = m.dueJobs(now).slice(0, limit);
    const ended = pastScores(m.inState('completed').map((j) => [j.id, j.score!]), now, 'retention end').slice(0, limit);
    const forgotten = pastScores([...m.dedup].map(([id, s]) => [id, s!]), now, 'idempotency window').slice(0, limit);
    const expected: SweepResult = { stalled: 0, deadLettered: 0, promoted: due.length, completedRemoved: ended.length, deadRemoved: 0, dedupForgotten: forgotten.length };
    const result = await env.q.sweep(this.limit === undefined ? {} : { limit: this.limit });
    env.note(`  -> ${fmt(result)}`);
    for (const [id] of expired) {
      const job = m.jobs.get(id)!;
      m.endLease(job);
      expected.stalled += 1;
      m.fail(job, 'lease expired', 0);
      if (job.state === 'dead') expected.deadLettered += 1;
    }
    for (const job of due) m.makePending(job);
    for (const [id] of ended) m.remove(m.jobs.get(id)!);
    for (const [id] of forgotten) m.dedup.delete(id);
    same(result, expected, 'sweep() result');
    coverage.stalledBySweep += result.stalled;
    coverage.deadLettered += result.deadLettered;
    coverage.promoted += result.promoted;
    coverage.completedRemoved += result.completedRemoved;
    coverage.dedupForgotten += result.dedupForgotten;
  }
}

class PauseCmd extends Base {
  constructor(readonly pause: boolean) {
    super();
  }
  toString(): string {
    return this.pause ? 'pause()' : 'resume()';
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    if (this.pause) await env.q.pause();
    else await env.q.resume();
    m.paused = this.pause;
    same(await env.q.isPaused(), this.pause, 'isPaused()');
  }
}

class DeadCmd extends Base {
  constructor(
    readonly op: 'retry' | 'purge',
    /** by ids: picks (index into dead jobs, the newest dead job, or another id); by limit: the limit */
    readonly target: { picks: Array<{ n: number; other: number; last?: boolean }> } | { limit: number },
  ) {
    super();
  }
  toString(): string {
    return `${this.op === 'retry' ? 'retryDead' : 'purgeDead'}(${fmt(this.target)})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const deadSorted = m.inState('dead').map((j): [string, number] => [j.id, j.score!]).sort(byScoreThenId);
    let target: string[] | { limit: number };
    let expected: string[];
    if ('limit' in this.target) {
      target = this.target;
      expected = deadSorted.slice(0, this.target.limit).map(([id]) => id);
    } else {
      const others = [...m.jobs.keys(), ...m.gone, 'no-such-job'];
      const ids = this.target.picks.map((p) =>
        p.other % 3 !== 0 && deadSorted.length ? deadSorted[p.last ? deadSorted.length - 1 : p.n % deadSorted.length]![0] : others[p.n % others.length]!,
      );
      target = ids;
      if (ids.some((id, i) => m.jobs.get(id)?.state === 'dead' && ids.indexOf(id) !== i)) coverage.repeatedDeadIds += 1;
      const seen = new Set<string>();
      expected = target.filter((id) => m.jobs.get(id)?.state === 'dead' && !seen.has(id) && (seen.add(id), true));
    }
    const result = this.op === 'retry' ? await env.q.retryDead(target) : await env.q.purgeDead(target);
    env.note(`  ${fmt(target)} -> ${fmt(result)}`);
    same(result, expected, `${this.op}Dead(${fmt(target)}) result`);
    if (this.op === 'retry') coverage.retriedDead += result.length;
    else coverage.purgedDead += result.length;
    for (const id of expected) {
      const job = m.jobs.get(id)!;
      if (this.op === 'purge') m.remove(job);
      else {
        job.o = job.f;
        job.e = undefined;
        m.makePending(job);
      }
    }
  }
}

/** A job id to act on: one in `state` (else any job, else an id that is not there). */
type IdPick = { state: State | 'gone' | 'any' | 'newest-lease'; n: number };
const idPick: fc.Arbitrary<IdPick> = fc.record({
  state: fc.constantFrom<IdPick['state']>('pending', 'working', 'delayed', 'completed', 'dead', 'gone', 'any', 'any'),
  n: fc.nat(),
});

function pickId(m: Model, p: IdPick): string {
  let pool: string[];
  if (p.state === 'newest-lease') pool = m.leases.slice(-1).map((l) => l.job.id);
  else if (p.state === 'gone') pool = [...[...m.gone].filter((id) => !m.jobs.has(id)), 'no-such-job'];
  else if (p.state === 'any') pool = [...m.jobs.keys()];
  else pool = m.inState(p.state).map((j) => j.id);
  if (pool.length === 0) pool = [...m.jobs.keys()];
  if (pool.length === 0) pool = ['no-such-job'];
  return pool[p.n % pool.length]!;
}

/** remove(id, { force }): any state; a leased job only when forced (its lease ends); its idempotency window goes too. */
class RemoveCmd extends Base {
  constructor(
    readonly pick: IdPick,
    readonly force: boolean | undefined,
  ) {
    super();
  }
  toString(): string {
    return `remove(${fmt(this.pick)}${this.force === undefined ? '' : `, { force: ${this.force} }`})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const id = pickId(m, this.pick);
    const job = m.jobs.get(id);
    env.note(`  id ${fmt(id)} (${job?.state ?? 'none'})`);
    const call = (): Promise<boolean> => (this.force === undefined ? env.q.remove(id) : env.q.remove(id, { force: this.force }));
    if (!job) return env.noChange(`remove(${fmt(id)}) of a job that is not there`, call, false);
    if (job.state === 'working' && !this.force) {
      coverage.leasedRefused += 1;
      return env.noChange(`remove(${fmt(id)}) of a leased job without force`, call, JobLeasedError);
    }
    same(await call(), true, `remove(${fmt(id)}) of a ${job.state} job`);
    if (job.state === 'pending') m.unqueue(job);
    if (job.state === 'working') {
      m.endLease(job);
      coverage.forceRemoved += 1;
    }
    m.remove(job);
    m.dedup.delete(id); // the id may be added again at once
    coverage.removed += 1;
  }
}

/** promote(id): a delayed job becomes pending now (behind its priority); any other: false. */
class PromoteCmd extends Base {
  constructor(readonly pick: IdPick) {
    super();
  }
  toString(): string {
    return `promote(${fmt(this.pick)})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const id = pickId(m, this.pick);
    const job = m.jobs.get(id);
    env.note(`  id ${fmt(id)} (${job?.state ?? 'none'})`);
    if (job?.state !== 'delayed') return env.noChange(`promote(${fmt(id)}) of a job that is not delayed (${job?.state ?? 'none'})`, () => env.q.promote(id), false);
    same(await env.q.promote(id), true, `promote(${fmt(id)}) of a delayed job`);
    m.makePending(job);
    coverage.promotedByHand += 1;
  }
}

/**
 * changePriority(id, p): a pending job moves behind the jobs of priority p (an unchanged
 * priority keeps its place); a delayed, working or dead one keeps p for when it is pending
 * again. Completed or not there: false.
 */
class ChangePriorityCmd extends Base {
  constructor(
    readonly pick: IdPick,
    readonly priority: number,
    readonly lifo: boolean,
  ) {
    super();
  }
  toString(): string {
    return `changePriority(${fmt(this.pick)}, ${this.priority}${this.lifo ? ', { lifo: true }' : ''})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const id = pickId(m, this.pick);
    const job = m.jobs.get(id);
    env.note(`  id ${fmt(id)} (${job?.state ?? 'none'}, priority ${job?.priority})`);
    const call = (): Promise<boolean> => (this.lifo ? env.q.changePriority(id, this.priority, { lifo: true }) : env.q.changePriority(id, this.priority));
    const what = `changePriority(${fmt(id)}, ${this.priority}${this.lifo ? ', { lifo: true }' : ''})`;
    if (!job || job.state === 'completed') return env.noChange(`${what} of a job that is ${job ? 'completed' : 'not there'}`, call, false);
    // lifo moves a pending job to the head even when its priority is unchanged; it is not stored for later
    if (job.priority === this.priority && !(this.lifo && job.state === 'pending')) return env.noChange(`${what}: the priority it has`, call, true);
    same(await call(), true, `${what} of a ${job.state} job`);
    if (job.state === 'pending') {
      m.unqueue(job);
      job.priority = this.priority;
      m.makePending(job, this.lifo);
      coverage.reprioritized += 1;
      if (this.lifo) coverage.lifoReprioritized += 1;
    } else {
      job.priority = this.priority;
      coverage.priorityKept += 1;
    }
  }
}

/**
 * cancel(id, { outcome, reason }): a job no lease holds is removed as remove() removes it
 * ('removed'); a leased one (its lease run out or not) ends its attempt with a
 * CancelledError: dead-lettered ('dead', the default), or with 'retry' a failed attempt that
 * follows its backoff (only jobs with a fixed backoff and no jitter are retried here: the
 * default one is neither tiny nor large). A finished job, or none: false, nothing written.
 */
class CancelCmd extends Base {
  constructor(
    readonly pick: IdPick,
    readonly outcome: 'dead' | 'retry' | undefined,
  ) {
    super();
  }
  toString(): string {
    return `cancel(${fmt(this.pick)}${this.outcome === undefined ? '' : `, { outcome: '${this.outcome}' }`})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const id = pickId(m, this.pick);
    const job = m.jobs.get(id);
    let outcome = this.outcome;
    if (outcome === 'retry' && (job?.fixedBackoff === undefined || (job.backoff.jitter ?? 0) !== 0)) outcome = 'dead';
    env.note(`  id ${fmt(id)} (${job?.state ?? 'none'})`);
    const call = (): Promise<unknown> => env.q.cancel(id, { reason: 'model', ...(outcome ? { outcome } : {}) });
    const what = `cancel(${fmt(id)})`;
    if (!job || job.state === 'completed' || job.state === 'dead') return env.noChange(`${what} of a job that is ${job ? job.state : 'not there'}`, call, false);
    if (job.state !== 'working') {
      same(await call(), 'removed', `${what} of a ${job.state} job`);
      if (job.state === 'pending') m.unqueue(job);
      m.remove(job);
      m.dedup.delete(id);
      coverage.cancelledWaiting += 1;
      return;
    }
    const error = `CancelledError: job ${id} was cancelled: model`;
    await env.pastFinishes([job]);
    m.endLease(job);
    if (outcome === 'retry') {
      m.fail(job, error, job.fixedBackoff!);
      const after = job.state as State;
      same(await call(), after === 'dead' ? 'dead' : 'retried', `${what} of a leased job, retried`);
    } else {
      job.f += 1;
      job.e = error;
      m.kill(job);
      same(await call(), 'dead', `${what} of a leased job`);
    }
    coverage.cancelledRunning += 1;
  }
}

/**
 * retry(id): a completed (still kept) or dead job goes back to pending with a fresh attempt
 * budget, its result and idempotency window gone; it answers the state it left. Any other
 * job, or none: JobNotRetryableError, nothing written.
 */
class RetryJobCmd extends Base {
  constructor(readonly pick: IdPick) {
    super();
  }
  toString(): string {
    return `retry(${fmt(this.pick)})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const id = pickId(m, this.pick);
    const job = m.jobs.get(id);
    env.note(`  id ${fmt(id)} (${job?.state ?? 'none'})`);
    const call = (): Promise<unknown> => env.q.retry(id);
    const kept = job?.state === 'completed' && job.score !== undefined && job.score > (await redisNow(obs));
    if (!job || (job.state !== 'dead' && !kept)) return env.noChange(`retry(${fmt(id)}) of a job that is ${job ? job.state : 'not there'}`, call, JobNotRetryableError);
    same(await call(), job.state, `retry(${fmt(id)}) of a ${job.state} job`);
    if (job.state === 'completed') {
      m.dedup.delete(id);
      env.forgetAcks(job);
    }
    job.result = undefined;
    job.completedAt = undefined;
    job.o = job.f;
    job.e = undefined;
    m.makePending(job);
    coverage.retriedById += 1;
  }
}

/** updateData(id, data): any job no lease holds gets the data; a leased one: JobLeasedError; none (or a completed one past its retention): false. */
class UpdateDataCmd extends Base {
  constructor(
    readonly pick: IdPick,
    readonly data: Json,
  ) {
    super();
  }
  toString(): string {
    return `updateData(${fmt(this.pick)}, ${fmt(this.data)})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const id = pickId(m, this.pick);
    const job = m.jobs.get(id);
    env.note(`  id ${fmt(id)} (${job?.state ?? 'none'})`);
    const call = (): Promise<unknown> => env.q.updateData(id, this.data);
    const gone = !job || (job.state === 'completed' && job.score !== undefined && job.score <= (await redisNow(obs)));
    if (gone) return env.noChange(`updateData(${fmt(id)}) of a job that is not there`, call, false);
    if (job.state === 'working') return env.noChange(`updateData(${fmt(id)}) of a leased job`, call, JobLeasedError);
    same(await call(), true, `updateData(${fmt(id)}) of a ${job.state} job`);
    job.data = JSON.parse(JSON.stringify(this.data)) as Json; // -0 is stored as 0
    coverage.dataUpdated += 1;
  }
}

/** changeDelay(id, ms): a delayed job is due `ms` from now (behind the jobs delayed before it to that time); any other: false. */
class ChangeDelayCmd extends Base {
  constructor(
    readonly pick: IdPick,
    readonly ms: number,
  ) {
    super();
  }
  toString(): string {
    return `changeDelay(${fmt(this.pick)}, ${this.ms})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const id = pickId(m, this.pick);
    const job = m.jobs.get(id);
    env.note(`  id ${fmt(id)} (${job?.state ?? 'none'})`);
    const call = (): Promise<unknown> => env.q.changeDelay(id, this.ms);
    if (job?.state !== 'delayed') return env.noChange(`changeDelay(${fmt(id)}) of a job that is not delayed (${job?.state ?? 'none'})`, call, false);
    same(await call(), true, `changeDelay(${fmt(id)}, ${this.ms}) of a delayed job`);
    m.makeDelayed(job);
    coverage.delayChanged += 1;
  }
}

/** clearLogs(id, { keep }): the job's log lines but the last `keep` go; answers how many went. */
class ClearLogsCmd extends Base {
  constructor(
    readonly pick: IdPick,
    readonly keep: number,
  ) {
    super();
  }
  toString(): string {
    return `clearLogs(${fmt(this.pick)}, { keep: ${this.keep} })`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const id = pickId(m, this.pick);
    const job = m.jobs.get(id);
    env.note(`  id ${fmt(id)} (${job?.state ?? 'none'}, ${job?.logs.length ?? 0} lines)`);
    const call = (): Promise<unknown> => env.q.clearLogs(id, { keep: this.keep });
    const lines = job?.logs.length ?? 0;
    if (lines <= this.keep) return env.noChange(`clearLogs(${fmt(id)}) with ${lines} lines, keep ${this.keep}`, call, 0);
    same(await call(), lines - this.keep, `clearLogs(${fmt(id)}, { keep: ${this.keep} })`);
    job!.logs = this.keep === 0 ? [] : job!.logs.slice(-this.keep);
    coverage.logsCleared += 1;
  }
}

/** removeDeduplicationKey(id): a held id is free at once (its job stays): true; none held: false, nothing written. */
class RemoveDedupKeyCmd extends Base {
  constructor(readonly did: string) {
    super();
  }
  toString(): string {
    return `removeDeduplicationKey(${fmt(this.did)})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const call = (): Promise<boolean> => env.q.removeDeduplicationKey(this.did);
    const h = m.holders.get(this.did);
    if (!h) return env.noChange(`removeDeduplicationKey(${fmt(this.did)}) of an id no job holds`, call, false);
    same(await call(), true, `removeDeduplicationKey(${fmt(this.did)}) held by ${h.job} (${h.mode})`);
    m.holders.delete(this.did);
    coverage.dedupKeysRemoved += 1;
  }
}

/** getCountsPerPriority(priorities): the pending jobs of each priority (a read: nothing written). */
class CountsPerPriorityCmd extends Base {
  constructor(readonly priorities: number[]) {
    super();
  }
  toString(): string {
    return `getCountsPerPriority(${fmt(this.priorities)})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const before = withoutReplayRecords(await env.snapshot(), env.q);
    const counts = await env.q.getCountsPerPriority(this.priorities);
    const expected = Object.fromEntries(this.priorities.map((p) => [p, p === 0 ? m.pending.length : m.prio.filter((x) => x.p === p).length]));
    same(counts, expected, `getCountsPerPriority(${fmt(this.priorities)})`);
    same(withoutReplayRecords(await env.snapshot(), env.q), before, `getCountsPerPriority(): a read changed the queue's keys`);
    coverage.countsPerPriority += 1;
  }
}

/** getJobs([states], page): one page through the states in the order given, each in `order` (a read). */
class GetJobsMultiCmd extends Base {
  constructor(
    readonly states: PageState[],
    readonly start: number | undefined,
    readonly size: number | undefined,
    readonly order: 'asc' | 'desc' | undefined,
  ) {
    super();
  }
  toString(): string {
    return `getJobs(${fmt(this.states)}, ${fmt(this.page())})`;
  }
  page(): JobPage {
    const p: JobPage = {};
    if (this.start !== undefined) p.start = this.start;
    if (this.size !== undefined) p.end = (this.start ?? 0) + this.size;
    if (this.order !== undefined) p.order = this.order;
    return p;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const now = await env.passHorizon(); // no retention ends during the read
    const page = this.page();
    const start = page.start ?? 0;
    const end = page.end ?? start + 99;
    const before = withoutReplayRecords(await env.snapshot(), env.q);
    const jobs = await env.q.getJobs(this.states, page);
    const expected = this.states
      .flatMap((state) => {
        const all = env.inOrder(state).filter((j) => state !== 'completed' || j.score! > now);
        return page.order === 'desc' ? all.reverse() : all;
      })
      .slice(start, end + 1);
    const what = `getJobs(${fmt(this.states)}, ${fmt(page)})`;
    same(
      jobs.map((i) => i.id),
      expected.map((j) => j.id),
      `${what}: ids`,
    );
    jobs.forEach((info, i) => same(jobView(info, false), expectedView(expected[i]!, false), `${what}: job ${info.id}`));
    same(withoutReplayRecords(await env.snapshot(), env.q), before, `${what}: a read changed the queue's keys`);
    coverage.multiStateJobs += jobs.length;
  }
}

/** drain(): every pending and delayed job goes (idempotency windows stay); working, completed and dead ones stay. */
class DrainCmd extends Base {
  toString(): string {
    return 'drain()';
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const waiting = [...m.inState('pending'), ...m.inState('delayed')];
    if (waiting.length === 0) return env.noChange('drain() with no waiting job', () => env.q.drain(), 0);
    same(await env.q.drain(), waiting.length, 'drain(): the number of pending and delayed jobs');
    m.pending = [];
    m.prio = [];
    for (const job of waiting) m.remove(job);
    coverage.drained += waiting.length;
  }
}

type OlderThan = 'none' | 'zero' | 'tiny' | 'large' | 'split';

/**
 * clean('completed' | 'dead', { olderThanMs, limit }): finished jobs that finished at least
 * olderThanMs ago, oldest first (completed: in order of retention end, stopping at the first
 * too recent; dead: by time of death), at most limit. Completed jobs keep their idempotency
 * windows. olderThanMs: absent, 0, tiny (waited out first: every job qualifies), large (none
 * does) or 'split': the age of one of the jobs, so that the Redis clock decides for the jobs
 * finished about then: the result must be what some cutoff within the call's time allows.
 */
class CleanCmd extends Base {
  constructor(
    readonly state: 'completed' | 'dead',
    readonly older: OlderThan,
    readonly n: number,
    readonly limit: number | undefined,
  ) {
    super();
  }
  toString(): string {
    return `clean('${this.state}', { olderThanMs: ${this.older}${this.older === 'split' || this.older === 'tiny' ? ` ${this.n}` : ''}, limit: ${this.limit} })`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    await env.passHorizon();
    const before = withoutReplayRecords(await env.snapshot(), env.q);
    let now = await redisNow(obs);
    // when each job finished, and the order the call examines them in
    const finishedAt = (j: MJob): number => (this.state === 'completed' ? j.completedAt! : j.score!);
    const sorted = m.inState(this.state).sort((a, b) => byScoreThenId([a.id, a.score!], [b.id, b.score!]));
    const head = sorted.slice(0, this.limit ?? 1000);
    let olderThanMs: number | undefined;
    switch (this.older) {
      case 'none':
        break;
      case 'zero':
        olderThanMs = 0;
        break;
      case 'large':
        olderThanMs = LARGE_MS;
        break;
      case 'tiny':
        olderThanMs = 1 + (this.n % 4);
        now = await env.waitForClock(Math.max(0, ...sorted.map(finishedAt)) + olderThanMs);
        break;
      case 'split': {
        const byAge = sorted.map(finishedAt).sort((a, b) => a - b);
        olderThanMs = byAge.length ? Math.max(0, now - byAge[this.n % byAge.length]!) : 0;
        break;
      }
    }
    const opts: { olderThanMs?: number; limit?: number } = {};
    if (olderThanMs !== undefined) opts.olderThanMs = olderThanMs;
    if (this.limit !== undefined) opts.limit = this.limit;
    const what = `clean('${this.state}', ${fmt(opts)})`;
    const t0 = await redisNow(obs);
    const ids = await env.q.clean(this.state, opts);
    const t1 = await redisNow(obs);
    env.note(`  ${what} at [${t0}, ${t1}] -> ${fmt(ids)}`);
    // a prefix of the examined jobs, as one cutoff within the call allows: the jobs it took
    // finished by it, the next one (unless the limit stopped the call) after it
    const n = ids.length;
    same(ids, head.slice(0, n).map((j) => j.id), `${what}: a prefix of the ${this.state} jobs, oldest first`);
    const o = olderThanMs ?? 0;
    const lo = Math.max(t0 - o, ...head.slice(0, n).map(finishedAt));
    const hi = Math.min(t1 - o, n < head.length ? finishedAt(head[n]!) - 1 : Infinity);
    assert(
      lo <= hi,
      `${what} removed ${n} of ${fmt(head.map((j) => [j.id, finishedAt(j)]))}: no cutoff within [${t0 - o}, ${t1 - o}] gives that`,
    );
    if (n === 0) same(withoutReplayRecords(await env.snapshot(), env.q), before, `${what} removed nothing: the queue's keys`);
    if (n > 0 && n < head.length && this.older !== 'large') coverage.cleanedSome += 1;
    for (const j of head.slice(0, n)) m.remove(j);
    if (this.state === 'completed') coverage.cleanedCompleted += n;
    else coverage.cleanedDead += n;
  }
}

/** Waits until the Redis clock is `gapMs` past the last completion or death (so that the next one is later). */
class TickCmd extends Base {
  constructor(readonly gapMs: number) {
    super();
  }
  toString(): string {
    return `tick(${this.gapMs})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const finished = [...m.inState('completed').map((j) => j.completedAt!), ...m.inState('dead').map((j) => j.score!)];
    await env.waitForClock(Math.max(0, ...finished) + this.gapMs);
  }
}

/** One page of getJobs(state, { start, end, order }) against the model (a read: nothing written). */
class GetJobsCmd extends Base {
  constructor(
    readonly state: PageState,
    readonly start: number | undefined,
    readonly size: number | undefined,
    readonly order: 'asc' | 'desc' | undefined,
  ) {
    super();
  }
  toString(): string {
    return `getJobs('${this.state}', ${fmt(this.page())})`;
  }
  page(): JobPage {
    const p: JobPage = {};
    if (this.start !== undefined) p.start = this.start;
    if (this.size !== undefined) p.end = (this.start ?? 0) + this.size;
    if (this.order !== undefined) p.order = this.order;
    return p;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    await env.passHorizon(); // no retention ends during the read
    const page = this.page();
    const start = page.start ?? 0;
    const before = withoutReplayRecords(await env.snapshot(), env.q);
    await env.expectPage(this.state, () => env.q.getJobs(this.state, page), page.order ?? 'asc', start, page.end ?? start + 99);
    same(withoutReplayRecords(await env.snapshot(), env.q), before, `getJobs('${this.state}'): a read changed the queue's keys`);
  }
}

/** updateProgress(lease, progress): stored by the current lease; a stale one writes nothing. */
class ProgressCmd extends Base {
  constructor(
    readonly ref: LeaseRef,
    readonly progress: Json,
  ) {
    super();
  }
  toString(): string {
    return `updateProgress(lease ${fmt(this.ref)}, ${fmt(this.progress)})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const lease = pickLease(m, this.ref);
    if (!lease) return;
    const call = (): Promise<boolean> => env.q.updateProgress(lease, this.progress as JobProgress);
    if (!m.isCurrent(lease)) return env.unchanged('updateProgress with a stale lease', call, false, lease);
    same(await call(), true, `updateProgress with the current lease of ${lease.job.id}`);
    m.jobs.get(lease.job.id)!.progress = JSON.parse(JSON.stringify(this.progress)) as Json; // -0 is stored as 0
    coverage.progressStored += 1;
  }
}

/** log(lease, line): appended by the current lease (the last MAX_LOG_LINES kept); a stale one writes nothing. */
class LogCmd extends Base {
  constructor(
    readonly ref: LeaseRef,
    readonly lines: string[],
  ) {
    super();
  }
  toString(): string {
    return `log(lease ${fmt(this.ref)}, ${fmt(this.lines)})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const lease = pickLease(m, this.ref);
    if (!lease) return;
    for (const line of this.lines) {
      const call = (): Promise<boolean> => env.q.log(lease, line);
      if (!m.isCurrent(lease)) return env.unchanged('log with a stale lease', call, false, lease);
      same(await call(), true, `log(${fmt(line)}) with the current lease of ${lease.job.id}`);
      const job = m.jobs.get(lease.job.id)!;
      job.logs.push(line);
      if (job.logs.length > MAX_LOG_LINES) {
        job.logs.shift();
        coverage.linesTrimmed += 1;
      }
      job.logToken = lease.token;
      coverage.linesLogged += 1;
    }
  }
}

type ForgeKind = 'suffix' | 'truncated' | 'empty' | 'random' | 'other-job-token' | 'ghost-id';
type ForgeOp = 'ack' | 'ackBatch' | 'nack' | 'requeue' | 'reject' | 'touch' | 'progress' | 'log';

class ForgedCmd extends Base {
  constructor(
    readonly ref: LeaseRef,
    readonly kind: ForgeKind,
    readonly op: ForgeOp,
    readonly random: string,
    readonly other: number,
  ) {
    super();
  }
  toString(): string {
    return `${this.op}(forged ${this.kind} lease ${fmt(this.ref)}${this.kind === 'random' ? ` token ${fmt(this.random)}` : ''})`;
  }
  protected async exec(m: Model, env: Env): Promise<void> {
    const lease = pickLease(m, this.ref);
    if (!lease) return;
    let forged: Lease<Json>;
    switch (this.kind) {
      case 'suffix':
        forged = { ...lease, token: `${lease.token}x` };
        break;
      case 'truncated':
        forged = { ...lease, token: lease.token.slice(0, -1) };
        break;
      case 'empty':
        forged = { ...lease, token: '' };
        break;
      case 'random':
        forged = { ...lease, token: this.random };
        break;
      case 'other-job-token': {
        const others = m.leases.filter((l) => l.job.id !== lease.job.id);
        if (!others.length) return;
        forged = { ...lease, token: others[this.other % others.length]!.token };
        break;
      }
      case 'ghost-id':
        forged = { ...lease, job: { ...lease.job, id: `ghost:${this.other}` } };
        break;
    }
    assert(!m.isCurrent(forged), 'a forged lease is not current');
    const q = env.q;
    const what = `${this.op} with a forged lease (${this.kind})`;
    switch (this.op) {
      case 'ack':
        return env.unchanged(what, () => q.ack(forged, 'forged'));
      case 'ackBatch':
        return env.unchanged(what, () => q.ackBatch([forged, { lease: forged, result: 1 }]), [false, false]);
      case 'nack':
        return env.unchanged(what, () => q.nack(forged, { error: 'forged', delayMs: 0 }));
      case 'requeue':
        return env.unchanged(what, () => q.requeue(forged));
      case 'reject':
        return env.unchanged(what, () => q.reject(forged, 'forged'));
      case 'touch':
        return env.unchanged(what, () => q.touch(forged, LARGE_MS));
      case 'progress':
        return env.unchanged(what, () => q.updateProgress(forged, { forged: true }));
      case 'log':
        return env.unchanged(what, () => q.log(forged, 'forged'));
    }
  }
}

const delayArb = fc.oneof(fc.constant(0), tinyMs, fc.constant(LARGE_MS), fc.constant('backoff' as const));
const settleArb = (kind: SettleKind): fc.Arbitrary<Cmd> => {
  switch (kind) {
    case 'ack':
      return fc.tuple(leaseRef, fc.option(jsonData, { nil: undefined })).map(([r, res]) => new SettleCmd('ack', r, res, 0));
    case 'nack':
      return fc.tuple(leaseRef, fc.string({ maxLength: 8 }), delayArb).map(([r, e, d]) => new SettleCmd('nack', r, e, d));
    case 'requeue':
      return fc.tuple(leaseRef, delayArb).map(([r, d]) => new SettleCmd('requeue', r, null, d));
    case 'reject':
      return fc.tuple(leaseRef, fc.string({ maxLength: 8 })).map(([r, e]) => new SettleCmd('reject', r, e, 0));
  }
};
const addArb = addItem.map((it) => new AddCmd([it], false));
const leaseArb = fc.tuple(fc.integer({ min: 1, max: 5 }), fc.oneof(shortLeaseMs, fc.constant(LARGE_MS))).map(([c, ms]) => new LeaseCmd(c, ms));
const sweepArb = fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined, freq: 2 }).map((l) => new SweepCmd(l));
const deadArb = fc
  .tuple(
    fc.constantFrom('retry' as const, 'retry' as const, 'retry' as const, 'purge' as const),
    fc.oneof(
      fc.array(fc.record({ n: fc.nat(), other: fc.nat() }), { minLength: 1, maxLength: 3 }).map((picks) => ({ picks })),
      fc.integer({ min: 1, max: 3 }).map((limit) => ({ limit })),
    ),
  )
  .map(([op, t]) => new DeadCmd(op, t));
/** Forged leases mostly copy a current lease (the job is working: only the token is wrong). */
const forgedArb = fc
  .tuple(
    fc.record({ n: fc.nat(), live: fc.integer({ min: 0, max: 3 }).map((x) => x > 0), rival: fc.boolean() }),
    fc.constantFrom<ForgeKind>('suffix', 'truncated', 'empty', 'random', 'other-job-token', 'ghost-id'),
    fc.constantFrom<ForgeOp>('ack', 'ackBatch', 'nack', 'requeue', 'reject', 'touch', 'progress', 'log'),
    fc.string({ maxLength: 12 }),
    fc.nat(),
  )
  .map(([r, k, op, s, o]) => new ForgedCmd(r, k, op, s, o));
const touchArb = fc.tuple(leaseRef, fc.option(fc.oneof(tinyMs, fc.constant(LARGE_MS)), { nil: undefined })).map(([r, e]) => new TouchCmd(r, e));
/**
 * An idempotency key's whole life in one step: added (leased first: priority 1000), leased,
 * acked (gone at once or soon), then added again: refused while its window is open.
 */
const idempotencyCycleArb = fc
  .tuple(
    jsonData,
    fc.constantFrom(...JOB_IDS.slice(0, 3)),
    fc.oneof(fc.constant(0), tinyMs),
    fc.oneof(fc.constant(LARGE_MS), tinyMs, fc.constant(0)),
    fc.boolean(),
  )
  .map(
    ([data, jobId, keep, window, sweep]) =>
      new MacroCmd('idempotency', [
        new AddCmd([{ data, opts: { jobId, keepCompletedMs: keep, dedupWindowMs: window, priority: 1000 } }], false),
        new LeaseCmd(1, LARGE_MS),
        new SettleCmd('ack', { n: 0, live: false, newest: true }, 'done', 0),
        ...(sweep ? [new SweepCmd(undefined)] : []),
        new AddCmd([{ data, opts: { jobId } }], false),
      ]),
  );
/**
 * A jittered backoff's life in one step: added (leased first: priority 1000), leased, nacked
 * without delayMs (so its own backoff draws the delay), then leased again: the policy must
 * give the jitter back exactly.
 */
const jitterCycleArb = fc
  .tuple(jsonData, tinyMs, jitterArb.filter((j) => j !== 0), fc.integer({ min: 2, max: 3 }))
  .map(
    ([data, delayMs, jitter, attempts]) =>
      new MacroCmd('jitter', [
        new AddCmd([{ data, opts: { priority: 1000, attempts, backoff: { type: 'fixed', delayMs, jitter } } }], false),
        new LeaseCmd(1, LARGE_MS),
        new SettleCmd('nack', { n: 0, live: false, newest: true }, 'jittered', 'backoff'),
        new LeaseCmd(1, LARGE_MS),
      ]),
  );
/** A job dead-lettered, then retried or purged with its id named several times (and maybe others). */
const deadCycleArb = fc
  .tuple(jsonData, fc.constantFrom('retry' as const, 'purge' as const), fc.integer({ min: 2, max: 3 }), fc.array(fc.record({ n: fc.nat(), other: fc.nat() }), { maxLength: 2 }))
  .map(
    ([data, op, times, more]) =>
      new MacroCmd('dead', [
        new AddCmd([{ data, opts: { priority: 1000, attempts: 1 } }], false),
        new LeaseCmd(1, LARGE_MS),
        new SettleCmd('reject', { n: 0, live: false, newest: true }, 'no', 0),
        new DeadCmd(op, { picks: [...Array.from({ length: times }, () => ({ n: 0, other: 1, last: true })), ...more] }),
      ]),
  );
const priorityArb = fc.oneof(fc.constantFrom(0, 5, -5, 1000, -1000), fc.integer({ min: -1000, max: 1000 }));
const removeArb = fc.tuple(idPick, fc.constantFrom(undefined, false, true, true)).map(([p, f]) => new RemoveCmd(p, f));
/** Mostly a delayed job (the others answer false). */
const promoteArb = fc
  .tuple(idPick, fc.boolean())
  .map(([p, delayed]) => new PromoteCmd(delayed ? { ...p, state: 'delayed' } : p));
const changePriorityArb = fc.tuple(idPick, priorityArb, fc.boolean()).map(([p, pr, lifo]) => new ChangePriorityCmd(p, pr, lifo));
/** lifo: mostly a pending job (it moves to the head of its priority, also an unchanged one). */
const changePriorityLifoArb = fc
  .tuple(idPick, fc.oneof(priorityArb, fc.constant(0)), fc.boolean())
  .map(([p, pr, pending]) => new ChangePriorityCmd(pending ? { ...p, state: 'pending' } : p, pr, true));
const cancelArb = fc.tuple(idPick, fc.constantFrom(undefined, 'dead' as const, 'retry' as const)).map(([p, o]) => new CancelCmd(p, o));
const retryJobArb = idPick.map((p) => new RetryJobCmd(p));
const updateDataArb = fc.tuple(idPick, jsonData).map(([p, d]) => new UpdateDataCmd(p, d));
/** Mostly a delayed job (the others answer false), to a tiny or a large delay. */
const changeDelayArb = fc
  .tuple(idPick, fc.boolean(), fc.oneof(tinyMs, fc.constant(LARGE_MS)))
  .map(([p, delayed, ms]) => new ChangeDelayCmd(delayed ? { ...p, state: 'delayed' } : p, ms));
const clearLogsArb = fc.tuple(idPick, fc.integer({ min: 0, max: 2 })).map(([p, k]) => new ClearLogsCmd(p, k));
const cleanArb = fc
  .tuple(
    fc.constantFrom('completed' as const, 'completed' as const, 'dead' as const),
    fc.constantFrom<OlderThan>('none', 'zero', 'tiny', 'large', 'split', 'split'),
    fc.nat(),
    fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  )
  .map(([st, o, n, l]) => new CleanCmd(st, o, n, l));
const getJobsArb = fc
  .tuple(
    fc.constantFrom<PageState>(...JOB_STATES),
    fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
    fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
    fc.constantFrom(undefined, 'asc' as const, 'desc' as const),
  )
  .map(([st, start, size, order]) => new GetJobsCmd(st, start, size, order));
/** Progress: a number (any finite double) or a JSON object or array. */
const progressArb: fc.Arbitrary<Json> = fc.oneof(
  fc.integer({ min: 0, max: 100 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.record({ done: fc.integer({ min: 0, max: 1000 }), of: fc.integer({ min: 0, max: 1000 }), note: fc.string({ maxLength: 4 }) }, { requiredKeys: ['done'] }),
  fc.array(jsonData, { maxLength: 3 }),
);
const progressCmdArb = fc.tuple(leaseRef, progressArb).map(([r, v]) => new ProgressCmd(r, v));
const logLine = fc.oneof(fc.string({ maxLength: 8 }), fc.string({ unit: 'grapheme', maxLength: 6 }), fc.constantFrom('', 'a\nb', '0 x y'));
const logCmdArb = fc.tuple(leaseRef, fc.array(logLine, { minLength: 1, maxLength: 5 })).map(([r, lines]) => new LogCmd(r, lines));
/** A job's notes through its life: leased, progress and lines written, failed or requeued, leased again and written again. */
const notesCycleArb = fc
  .tuple(jsonData, progressArb, fc.array(logLine, { minLength: 1, maxLength: 4 }), fc.constantFrom('nack' as const, 'requeue' as const), progressArb, logLine)
  .map(
    ([data, p1, lines, settle, p2, line2]) =>
      new MacroCmd('notes', [
        new AddCmd([{ data, opts: { priority: 1000, attempts: 2, lifo: true } }], false),
        new LeaseCmd(1, LARGE_MS),
        new ProgressCmd({ n: 0, live: false, newest: true }, p1),
        new LogCmd({ n: 0, live: false, newest: true }, lines),
        new SettleCmd(settle, { n: 0, live: false, newest: true }, 'again', 0),
        new LeaseCmd(1, LARGE_MS),
        new ProgressCmd({ n: 0, live: false, newest: true }, p2),
        new LogCmd({ n: 0, live: false, newest: true }, [line2]),
        // the first lease is stale now
        new ProgressCmd({ n: 0, live: false, rival: true }, p1),
      ]),
  );
/**
 * A running job's lines cleared, its data refused by id, the job cancelled (dead-lettered, or
 * retried after its fixed backoff), its holder's late ack refused, then retried by id.
 */
const cancelCycleArb = fc
  .tuple(jsonData, fc.array(logLine, { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 2 }), fc.constantFrom(undefined, 'dead' as const, 'retry' as const), jsonData)
  .map(
    ([data, lines, keep, outcome, data2]) =>
      new MacroCmd('cancel', [
        new AddCmd([{ data, opts: { priority: 1000, attempts: 2, lifo: true, backoff: 2 } }], false),
        new LeaseCmd(1, LARGE_MS),
        new LogCmd({ n: 0, live: false, newest: true }, lines),
        new ClearLogsCmd({ state: 'newest-lease', n: 0 }, keep),
        new UpdateDataCmd({ state: 'newest-lease', n: 0 }, data2),
        new CancelCmd({ state: 'newest-lease', n: 0 }, outcome),
        new SettleCmd('ack', { n: 0, live: false, newest: true }, 'late', 0),
        new RetryJobCmd({ state: 'newest-lease', n: 0 }),
      ]),
  );
/**
 * A leased job removed (forced or not), then its holder acks or touches it: refused once the
 * job is gone, and its id may be added again at once (its idempotency window went with it).
 */
const removeLeasedArb = fc
  .tuple(jsonData, fc.constantFrom(...JOB_IDS), fc.constantFrom(true, true, false, undefined), fc.constantFrom('ack' as const, 'touch' as const))
  .map(
    ([data, jobId, force, op]) =>
      new MacroCmd('removeLeased', [
        new AddCmd([{ data, opts: { jobId, priority: 1000, lifo: true } }], false),
        new LeaseCmd(1, LARGE_MS),
        new RemoveCmd({ state: 'newest-lease', n: 0 }, force),
        op === 'ack' ? new SettleCmd('ack', { n: 0, live: false, newest: true }, 'late', 0) : new TouchCmd({ n: 0, live: false, newest: true }, LARGE_MS),
        new AddCmd([{ data, opts: { jobId } }], false),
      ]),
  );
/**
 * Jobs that finish (completed, or dead) a few ms apart, then clean() by age: 'split' cuts
 * between them (the jobs that finished by the cutoff go, the later ones stay).
 */
const cleanCycleArb = fc
  .tuple(
    fc.array(jsonData, { minLength: 2, maxLength: 3 }),
    fc.constantFrom('completed' as const, 'dead' as const),
    fc.constantFrom<OlderThan>('split', 'split', 'split', 'zero', 'large'),
    fc.nat(),
    fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
    fc.boolean(),
  )
  .map(([datas, state, older, n, limit, keepShort]) => {
    const opts: JobOpts = { priority: 1000, attempts: 1, keepCompletedMs: keepShort ? LARGE_MS : 2 * LARGE_MS };
    const finish = (): Base =>
      state === 'completed' ? new SettleCmd('ack', { n: 0, live: false, newest: true }, 'done', 0) : new SettleCmd('reject', { n: 0, live: false, newest: true }, 'no', 0);
    return new MacroCmd(`clean-${state}`, [
      ...datas.flatMap((data, i) => [
        ...(i > 0 ? [new TickCmd(3)] : []),
        new AddCmd([{ data, opts: { ...opts, keepCompletedMs: i % 2 ? LARGE_MS : opts.keepCompletedMs! } }], false),
        new LeaseCmd(1, LARGE_MS),
        finish(),
      ]),
      new CleanCmd(state, older, n, limit),
    ]);
  });
/** Delayed jobs made pending by hand (promote) and by a sweep (come due), then leased in priority order. */
const delayCycleArb = fc
  .tuple(jsonData, priorityArb, fc.nat(), tinyMs, fc.integer({ min: 1, max: 3 }))
  .map(
    ([data, priority, n, tiny, count]) =>
      new MacroCmd('delay', [
        new AddCmd([{ data, opts: { delayMs: LARGE_MS, priority } }], false),
        new AddCmd([{ data, opts: { delayMs: tiny } }], false),
        new PromoteCmd({ state: 'delayed', n }),
        new SweepCmd(undefined),
        new LeaseCmd(count, LARGE_MS),
      ]),
  );
/**
 * A deduplication id's life in one step: taken by an add (leased first: priority 1000), met by
 * a second add (ignored, or replacing the waiting debounce holder's data and due time), the
 * queue leased, maybe met while its holder runs (debounce: a new job takes it), maybe freed
 * by hand, the lease settled (the end frees an untilEnded or debounce id it still holds; a
 * requeued holder waits again), and met again.
 */
const dedupCycleArb = fc
  .tuple(
    fc.array(jsonData, { minLength: 4, maxLength: 4 }),
    fc.oneof(dedupArb(DEDUP_IDS), dedupArb(DEDUP_IDS).map((d): DedupOpts => ({ id: d.id, mode: 'debounce' }))),
    fc.constantFrom(0, 0, LARGE_MS),
    fc.oneof(fc.constant(0), fc.constant(0), tinyMs, fc.constant(LARGE_MS)),
    fc.constantFrom('ack' as const, 'reject' as const, 'requeue' as const),
    fc.constantFrom(true, true, false),
    fc.boolean(),
  )
  .map(([data, dedup, firstDelay, secondDelay, settle, meetRunning, free]) => {
    const meet = (d: Json, delayMs = 0): Base =>
      new AddCmd([{ data: d, opts: { deduplication: dedup, priority: 1000, delayMs, attempts: 2, keepCompletedMs: LARGE_MS, ...(delayMs ? {} : { lifo: true }) } }], false);
    return new MacroCmd('dedup', [
      meet(data[0]!, firstDelay),
      meet(data[1]!, secondDelay),
      new LeaseCmd(1, LARGE_MS),
      ...(meetRunning ? [meet(data[2]!)] : []),
      ...(free ? [new RemoveDedupKeyCmd(dedup.id)] : []),
      new SettleCmd(settle, { n: 0, live: false, newest: true }, 'done', 0),
      meet(data[3]!),
    ]);
  });
/**
 * A job holding a deduplication id is leased and met (debounce: a new job takes the id), dies
 * (its end frees the id it still holds) and is redriven: it holds nothing, and an add with the
 * id meets the new holder, if any, or makes a new job.
 */
const dedupRedriveArb = fc
  .tuple(jsonData, fc.constantFrom(...DEDUP_IDS), fc.constantFrom('untilEnded' as const, 'debounce' as const), fc.constantFrom('reject' as const, 'nack' as const))
  .map(
    ([data, id, mode, settle]) =>
      new MacroCmd('dedupRedrive', [
        new AddCmd([{ data, opts: { deduplication: { id, mode }, priority: 1000, lifo: true, attempts: 1 } }], false),
        new LeaseCmd(1, LARGE_MS),
        new AddCmd([{ data, opts: { deduplication: { id, mode } } }], false),
        new SettleCmd(settle, { n: 0, live: false, newest: true }, 'no', 0),
        new DeadCmd('retry', { picks: [{ n: 0, other: 1, last: true }] }),
        new AddCmd([{ data, opts: { deduplication: { id, mode } } }], false),
      ]),
  );
/** Jobs finished one by one (leased first: priority 1000, lifo), some with a retention count. */
const retentionCycleArb = fc
  .array(
    fc.record(
      {
        data: jsonData,
        ack: fc.boolean(),
        keepCount: countArb,
        deadCount: countArb,
        keepMs: fc.constantFrom(0, LARGE_MS, 2 * LARGE_MS),
        jobId: fc.constantFrom(...JOB_IDS),
      },
      { requiredKeys: ['data', 'ack', 'keepMs'] },
    ),
    { minLength: 2, maxLength: 2 },
  )
  .map(
    (jobs) =>
      new MacroCmd(
        'retention',
        jobs.flatMap(({ data, ack, keepCount, deadCount, keepMs, jobId }) => {
          // a custom id keeps its idempotency window when a count removes its completed job
          const opts: JobOpts = { priority: 1000, lifo: true, attempts: 1, ...(jobId === undefined ? {} : { jobId }) };
          if (keepCount === undefined) opts.keepCompletedMs = keepMs;
          else opts.keepCompleted = withCount(keepMs, keepCount);
          if (deadCount !== undefined) opts.keepDead = { count: deadCount };
          const newest = { n: 0, live: false, newest: true };
          return [new AddCmd([{ data, opts }], false), new LeaseCmd(1, LARGE_MS), ack ? new SettleCmd('ack', newest, 'done', 0) : new SettleCmd('reject', newest, 'no', 0)];
        }),
      ),
  );
/**
 * More than RETENTION_STEP jobs finish in one call (an ackBatch, or a sweep of expired
 * leases), one of them with count 1: the call removes RETENTION_STEP of them, no more.
 */
const retentionBudgetArb = fc
  .tuple(fc.integer({ min: 11, max: 13 }), fc.nat(), fc.boolean(), jsonData)
  .map(([n, k, completed, data]) => {
    const items: AddItem[] = Array.from({ length: n }, (_, i) => {
      const opts: JobOpts = { priority: 1000, attempts: 1, ...(completed ? { keepCompletedMs: LARGE_MS } : { leaseMs: 10 }) };
      if (i === k % n) {
        if (completed) opts.keepCompleted = { count: 1, ageMs: opts.keepCompletedMs! };
        else opts.keepDead = { count: 1 };
        delete opts.keepCompletedMs;
      }
      return { data, opts };
    });
    return new MacroCmd(`retentionBudget-${completed ? 'completed' : 'dead'}`, [
      new AddCmd(items, true),
      new LeaseCmd(n, LARGE_MS),
      completed
        ? new AckBatchCmd(Array.from({ length: n }, (_, back) => ({ n: 0, live: false, back, result: back % 2 === 0 })))
        : new SweepCmd(undefined),
    ]);
  });
/**
 * keepLastIfActive: adds that meet the id while its holder runs are kept (the last one), and
 * the holder's end adds the kept one (its delay from then), which takes the id; a requeued
 * holder waits again with the kept add; a cancelled one dies (the kept add is added).
 */
const dedupKeepArb = fc
  .tuple(
    fc.array(jsonData, { minLength: 3, maxLength: 3 }),
    fc.constantFrom(...DEDUP_IDS),
    fc.constantFrom('untilEnded' as const, 'debounce' as const),
    fc.oneof(fc.constant(0), tinyMs, fc.constant(LARGE_MS)),
    fc.boolean(),
    fc.constantFrom('ack' as const, 'reject' as const, 'requeue' as const, 'cancel' as const),
  )
  .map(([data, id, mode, delayMs, twice, end]) => {
    const deduplication: DedupOpts = { id, mode, keepLastIfActive: true };
    const newest = { n: 0, live: false, newest: true };
    return new MacroCmd('dedupKeep', [
      new AddCmd([{ data: data[0]!, opts: { deduplication, priority: 1000, lifo: true, attempts: 2 } }], false),
      new LeaseCmd(1, LARGE_MS),
      new AddCmd([{ data: data[1]!, opts: { deduplication, delayMs } }], false),
      ...(twice ? [new AddCmd([{ data: data[2]!, opts: { deduplication } }], false)] : []),
      end === 'cancel' ? new CancelCmd({ state: 'newest-lease', n: 0 }, undefined) : new SettleCmd(end, newest, 'done', 0),
    ]);
  });
/** One call's jobs meeting a deduplication id an earlier job of the call took (and plain jobs between them). */
const dedupBulkArb = fc
  .tuple(
    dedupArb(DEDUP_IDS),
    fc.array(fc.record({ data: jsonData, delayMs: fc.oneof(fc.constant(0), tinyMs, fc.constant(LARGE_MS)), plain: fc.boolean() }), { minLength: 2, maxLength: 5 }),
  )
  .map(
    ([deduplication, items]) =>
      new AddCmd(
        items.map(({ data, delayMs, plain }) => (plain ? { data, opts: { delayMs } } : { data, opts: { delayMs, deduplication } })),
        true,
      ),
  );
const removeDedupArb = fc.constantFrom(...DEDUP_IDS).map((did) => new RemoveDedupKeyCmd(did));
const countsPerPriorityArb = fc.array(priorityArb, { minLength: 1, maxLength: 4 }).map((ps) => new CountsPerPriorityCmd(ps));
const getJobsMultiArb = fc
  .tuple(
    fc.shuffledSubarray([...JOB_STATES], { minLength: 2 }),
    fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
    fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
    fc.constantFrom(undefined, 'asc' as const, 'desc' as const),
  )
  .map(([states, start, size, order]) => new GetJobsMultiCmd(states, start, size, order));
/** Repeated entries weigh more: fc.commands picks among the arbitraries uniformly. */
const commandArbs: Array<fc.Arbitrary<Cmd>> = [
  addArb,
  addArb,
  addArb,
  idempotentItem.map((it) => new AddCmd([it], false)),
  idempotencyCycleArb,
  idempotencyCycleArb, // twice: the management commands below made the sweeps' window clean-ups rarer
  idempotencyCycleArb, // thrice: so did the deduplication and retention commands (and counts trim completed jobs)
  jitterCycleArb,
  deadCycleArb,
  fc.array(fc.oneof({ weight: 3, arbitrary: addItem }, { weight: 1, arbitrary: dedupItem }), { minLength: 1, maxLength: 5 }).map((items) => new AddCmd(items, true)),
  leaseArb,
  leaseArb,
  leaseArb,
  settleArb('ack'),
  settleArb('ack'),
  settleArb('ack'),
  settleArb('nack'),
  settleArb('nack'),
  settleArb('requeue'),
  settleArb('requeue'),
  settleArb('reject'),
  fc.tuple(leaseRef, fc.boolean()).map(([r, b]) => new AckTwiceCmd(r, b)),
  fc.array(fc.record({ n: fc.nat(), live: fc.boolean(), rival: fc.boolean(), result: fc.boolean() }), { minLength: 1, maxLength: 4 }).map((refs) => new AckBatchCmd(refs)),
  touchArb,
  touchArb,
  sweepArb,
  sweepArb,
  sweepArb,
  // pause less often than resume, so that most of a run leases
  fc.constantFrom(true, false, false, false).map((p) => new PauseCmd(p)),
  deadArb,
  deadArb,
  deadArb,
  deadArb,
  forgedArb,
  forgedArb,
  forgedArb,
  forgedArb,
  removeArb,
  removeArb,
  promoteArb,
  changePriorityArb,
  changePriorityArb,
  changePriorityLifoArb,
  fc.constant(new DrainCmd()),
  cleanArb,
  getJobsArb,
  progressCmdArb,
  logCmdArb,
  notesCycleArb,
  removeLeasedArb,
  cleanCycleArb,
  delayCycleArb,
  cancelArb,
  retryJobArb,
  updateDataArb,
  changeDelayArb,
  clearLogsArb,
  cancelCycleArb,
  dedupItem.map((it) => new AddCmd([it], false)),
  dedupCycleArb,
  dedupRedriveArb,
  dedupKeepArb,
  dedupBulkArb,
  removeDedupArb,
  retentionCycleArb,
  retentionBudgetArb,
  countsPerPriorityArb,
  getJobsMultiArb,
];

// ---- the properties --------------------------------------------------------------------

beforeAll(async () => {
  server = await startRedis({ controllable: true });
  obs = redisClient(server, { maxRetriesPerRequest: 1 });
  obs.on('error', () => undefined);
});

afterAll(async () => {
  if (obs) await obs.quit().catch(() => obs.disconnect());
  await server?.stop();
});

/** Runs fc.assert; after SHRINK_BUDGET_MS of shrinking, further candidates pass at once (the smallest failure so far is reported). */
async function assertWithBudget(
  property: (cmds: Iterable<Cmd>) => Promise<void>,
  arb: fc.Arbitrary<Iterable<Cmd>>,
  stats: { runs: number; steps: number },
): Promise<void> {
  let firstFailureAt: number | undefined;
  const prop = fc.asyncProperty(arb, async (cmds) => {
    if (firstFailureAt !== undefined && Date.now() - firstFailureAt > SHRINK_BUDGET_MS) return;
    try {
      await property(cmds);
    } catch (err) {
      firstFailureAt ??= Date.now();
      throw err;
    }
  });
  await assertReplayable(prop, NUM_RUNS, (_seed, _path, message) => {
    const replay = /replayPath="([^"]*)"/.exec(message)?.[1];
    return (
      `${replay === undefined ? '' : ` RELQ_FC_REPLAY_PATH='${replay}'`}` +
      ' node --experimental-vm-modules node_modules/jest/bin/jest.js --runInBand test/property/model.spec.ts' +
      ` (${stats.runs} runs, ${stats.steps} steps before the report)`
    );
  });
}

describe('Queue against a reference model (random sequences, real Redis)', () => {
  test(
    'every step keeps the model and every invariant; stale and forged tokens change nothing',
    async () => {
      const stats = { runs: 0, steps: 0 };
      const constraints: fc.CommandsContraints = { maxCommands: MAX_COMMANDS, size: 'max' };
      if (REPLAY_PATH !== undefined) constraints.replayPath = REPLAY_PATH;
      const started = Date.now();
      await assertWithBudget(
        async (cmds) => {
          const env = new Env();
          try {
            await env.check(); // an empty queue
            await fc.asyncModelRun(() => ({ model: env.model, real: env }), cmds);
            stats.runs += 1;
            stats.steps += env.step;
          } finally {
            await env.close();
          }
        },
        fc.commands(commandArbs, constraints),
        stats,
      );
      // eslint-disable-next-line no-console
      console.log(`model: ${stats.runs} runs, ${stats.steps} steps in ${Date.now() - started} ms; exercised ${JSON.stringify(coverage)}`);
      // the runs did exercise every kind of transition (a replay of one seed may not: skip then)
      expect(stats.runs).toBeGreaterThan(0);
      expect(stats.steps).toBeGreaterThan(stats.runs);
      if (process.env.RELQ_FC_PATH === undefined && NUM_RUNS >= 20) {
        for (const [what, n] of Object.entries(coverage)) if (!RARE.has(what)) expect([what, n > 0]).toEqual([what, true]);
      }
    },
    180_000,
  );
});

// ---- pinned examples ------------------------------------------------------------------------
// Minimal examples of guarantees the property relies on (each was once broken).

describe('pinned examples', () => {
  async function deadJob(q: Queue<string>, data: string): Promise<string> {
    const { id } = await q.add(data, { attempts: 1 });
    const [l] = await q.lease();
    expect(l?.job.id).toBe(id);
    expect(await q.reject(l!, 'no')).toBe(true);
    return id;
  }

  test('retryDead([id, id]) moves the dead job back once and returns it once (pending once, leased once)', async () => {
    const q = new Queue<string>('dup-retry', { connection: server.url, prefix: uniquePrefix() });
    try {
      const id = await deadJob(q, 'x');
      const other = await deadJob(q, 'y');
      const moved = await q.retryDead([id, 'no-such-job', id, id]);
      const pending = await obs.lrange(q.keys.byName.pending, 0, -1);
      const leases = await q.lease({ count: 5 });
      const counts = await q.counts();
      expect({ moved, pending, live: counts.pending + counts.working, dead: counts.dead, leased: leases.map((x) => x.job.id) }).toEqual({
        moved: [id],
        pending: [id],
        live: 1,
        dead: 1,
        leased: [id],
      });
      expect((await q.listDead()).map((d) => d.id)).toEqual([other]);
    } finally {
      await q.close();
    }
  });

  test('purgeDead([id, id]) removes the dead job once and returns it once', async () => {
    const q = new Queue<string>('dup-purge', { connection: server.url, prefix: uniquePrefix() });
    try {
      const id = await deadJob(q, 'x');
      const other = await deadJob(q, 'y');
      expect(await q.purgeDead([id, id])).toEqual([id]);
      expect(await q.getJob(id)).toBeNull();
      expect(await q.counts()).toEqual(expect.objectContaining({ pending: 0, working: 0, dead: 1 }));
      expect((await q.listDead()).map((d) => d.id)).toEqual([other]);
      // named again once gone: nothing to remove
      expect(await q.purgeDead([id, id, other, other])).toEqual([other]);
      expect((await q.counts()).dead).toBe(0);
    } finally {
      await q.close();
    }
  });

  test('a backoff jitter is given back bit for bit by every lease, after every failure', async () => {
    const q = new Queue<string>('jitter', { connection: server.url, prefix: uniquePrefix() });
    try {
      const jitter = 1 / 3;
      await q.add('x', { attempts: 4, backoff: { type: 'fixed', delayMs: 0, jitter } });
      for (let failures = 0; failures < 3; failures++) {
        const [l] = await q.lease();
        expect({ failures, backoff: l?.job.policy.backoff }).toEqual({ failures, backoff: { type: 'fixed', delayMs: 0, jitter } });
        expect(await q.nack(l!, { error: 'again' })).toBe(true);
      }
      const [last] = await q.lease();
      expect(last?.job.attempt).toBe(4);
      expect(last?.job.policy.backoff).toEqual({ type: 'fixed', delayMs: 0, jitter });
    } finally {
      await q.close();
    }
  });
});
