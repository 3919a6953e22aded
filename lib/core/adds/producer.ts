import { MAX_TIMER_MS } from '../defaults.js';
import { ValidationError } from '../errors.js';
import { instruments, observedAdd, stampAll } from '../instrumentation/index.js';
import { encodeRecord } from '../redis/record.js';
import type { AddResult, BulkJob, DeduplicationOutcome, JobOptions } from './types.js';
import { assertInt, assertJobId, assertOptions, toJson } from '../validate.js';
import type { AddReply, ProduceItem } from '../backpressure/scripts.js';
import { IdGenerator } from './ids.js';
import { plainRecordMaker, prepareJob } from './job-options.js';
import type { QueueContext } from '../queue/queue-context.js';
import { addScript, deduplicationJobScript, removeDeduplicationScript } from './scripts.js';
import type { QueueProbe } from './queue-probe.js';
import type { QueueSettings } from '../settings/queue-settings.js';

/**
 * The add paths of one Queue object: plain adds (add.lua: FCALL + HSETNX + RPUSH) while the
 * queue needs nothing more, managed adds (produce.lua, through the bounded queue's
 * backpressure) when it is bounded, closable, grouped or counting.
 */
export class Producer<Data> {
  private readonly ids: IdGenerator;
  private readonly plainRecord: (now: number, dataJson: string) => string;

  constructor(
    private readonly ctx: QueueContext,
    private readonly settings: QueueSettings,
    private readonly probe: QueueProbe,
  ) {
    this.ids = new IdGenerator(ctx.idPrefix);
    this.plainRecord = plainRecordMaker(ctx.defaults);
  }

  async add(data: Data, opts: JobOptions | undefined, mode: 'wait' | 'try'): Promise<AddResult> {
    const [result] = await this.addMany([{ data, opts }], 'add', mode);
    return this.ctx.replicated(mode === 'try' ? 'tryAdd' : 'add', result!);
  }

  /** Throws at once for what is not a list of jobs (or bad call options); the jobs themselves are checked by the returned promise. */
  addBulk(jobs: ReadonlyArray<BulkJob<Data>>, opts: { waitMs?: number }, mode: 'wait' | 'try'): Promise<AddResult[]> {
    const call = mode === 'try' ? 'tryAddBulk' : 'addBulk';
    if (!Array.isArray(jobs)) throw new ValidationError('jobs', `${call} expects an array of { data, opts }`);
    if (mode === 'wait') {
      assertOptions('addBulk options', opts, ['waitMs']);
      if (opts.waitMs !== undefined) assertInt('waitMs', opts.waitMs, { max: MAX_TIMER_MS });
    }
    return this.addMany(jobs, 'addBulk', mode, opts.waitMs).then((r) => this.ctx.replicated(call, r));
  }

  private async addMany(jobs: ReadonlyArray<BulkJob<Data>>, op: 'add' | 'addBulk', mode: 'wait' | 'try', waitMs?: number): Promise<AddResult[]> {
    if (jobs.length === 0) {
      this.ctx.assertOpen();
      return [];
    }
    return this.sendPrepared(this.prepare(jobs, op, mode, waitMs), op, mode);
  }

  /**
   * Checks and encodes jobs (throws ValidationError, nothing sent): the first half of an add,
   * split off so that a partitioned queue checks every part before it sends any
   * (lib/core/partitions/). `indexOf` names a job in errors by its place in the caller's list.
   */
  prepare(jobs: ReadonlyArray<BulkJob<Data>>, op: 'add' | 'addBulk', mode: 'wait' | 'try', waitMs?: number, indexOf: (i: number) => number = (i) => i): PreparedAdd {
    this.ctx.assertOpen();
    const now = Date.now();
    const items: ProduceItem[] = [];
    let grouped = false;
    let deduped = false; // a job carries a deduplication id
    jobs.forEach((job, i) => {
      if (op === 'addBulk') assertOptions(`jobs[${indexOf(i)}]`, job, ['data', 'opts']);
      const dataJson = toJson(op === 'add' ? 'data' : `jobs[${indexOf(i)}].data`, job.data, this.ctx.maxPayloadBytes);
      if (job.opts === undefined) {
        // the common case: nothing to check, the meta is the queue's defaults
        items.push({ id: this.ids.next(), custom: 0, record: this.plainRecord(now, dataJson), priority: 0, due: '', group: '' });
        return;
      }
      const field = op === 'add' ? 'opts' : `jobs[${indexOf(i)}].opts`;
      const prepared = prepareJob(field, job.opts, this.ctx.defaults, now);
      const custom = prepared.id === undefined ? 0 : 1;
      const id = prepared.id ?? this.ids.next();
      const item: ProduceItem = { id, custom, record: encodeRecord(prepared.meta, dataJson), priority: prepared.priority, due: prepared.due, group: prepared.group };
      if (prepared.dedup) item.dedup = deduped = true;
      items.push(item);
      if (prepared.group !== '') grouped = true;
      if (job.opts?.waitMs !== undefined) {
        // how long one call waits for room: a job's own value means something only for add()
        if (mode === 'try') throw new ValidationError(`${field}.waitMs`, `${op === 'add' ? 'tryAdd' : 'tryAddBulk'} never waits for room; use ${op} to wait`);
        if (op !== 'add') throw new ValidationError(`${field}.waitMs`, 'is an option of the whole call: addBulk(jobs, { waitMs })');
        waitMs = job.opts?.waitMs;
      }
    });
    return { items, grouped, deduped, now, waitMs };
  }

  /** The second half of an add: sends what prepare() made (one script call), traced when tracing is on. */
  sendPrepared(p: PreparedAdd, op: 'add' | 'addBulk', mode: 'wait' | 'try'): Promise<AddResult[]> {
    const { items, grouped, deduped, now, waitMs } = p;
    if (instruments.length === 0) return this.send(items, op, mode, grouped, deduped, now, waitMs);
    const call = mode === 'try' ? (op === 'add' ? 'tryAdd' : 'tryAddBulk') : op;
    return observedAdd(
      { queue: this.ctx.name, op: call, ids: items.map((it) => it.id) },
      (carrier) => stampAll(items, carrier),
      () => this.send(items, op, mode, grouped, deduped, now, waitMs),
      (results) => results.map((r) => r.created),
    );
  }

  private async send(
    items: ProduceItem[],
    op: 'add' | 'addBulk',
    mode: 'wait' | 'try',
    grouped: boolean,
    deduped: boolean,
    now: number,
    waitMs: number | undefined,
  ): Promise<AddResult[]> {
    // Bounded / closable / grouped adds read the queue's state (produce.lua); plain adds stay
    // FCALL + HSETNX + RPUSH (add.lua), while this producer's fresh reading of the queue's
    // state finds nothing they would miss (lib/core/adds/queue-probe.ts).
    let created: AddReply[];
    if (this.settings.managed || mode === 'try' || grouped || this.settings.addsWaiting || !this.probe.plainAdds(now)) {
      created = await this.settings.produce(items, mode, waitMs);
    } else {
      if (this.settings.hasSettings) await this.settings.configure(); // e.g. stats: false, once
      // A deduplicated add's event goes to whoever listens now: the script asks (one EXISTS).
      const events = this.ctx.eventsFlag === '1' && (deduped || this.probe.listening()) ? '1' : '0';
      created = await this.ctx.run(addScript, { events: this.ctx.addFlag(events), jobs: items, queue: this.ctx.name }, op);
    }
    return items.map((it, i) => addResult(it.id, created[i]!));
  }

  /** The id of the job holding deduplication id `id`, or null (adds/deduplication.lua). */
  async getDeduplicationJobId(id: string): Promise<string | null> {
    assertJobId(id, 'id');
    return this.ctx.run(deduplicationJobScript, { id });
  }

  /** Frees deduplication id `id` whatever its job does; true when a job held it. */
  async removeDeduplicationKey(id: string): Promise<boolean> {
    assertJobId(id, 'id');
    return this.ctx.run(removeDeduplicationScript, { id });
  }
}

/** @internal Jobs checked and encoded by Producer.prepare(), not sent yet. */
export interface PreparedAdd {
  readonly items: ProduceItem[];
  readonly grouped: boolean;
  readonly deduped: boolean;
  /** The client's clock when they were checked: their records' creation time. */
  readonly now: number;
  readonly waitMs: number | undefined;
}

const OUTCOMES: Readonly<Record<string, DeduplicationOutcome>> = { i: 'ignored', r: 'replaced', d: 'deferred' };

/** One job's AddResult from add-jobs.lua's answer: 1 / 0, or a deduplicated add's outcome and the id of the job that holds its deduplication id. */
function addResult(id: string, reply: AddReply): AddResult {
  if (typeof reply === 'number') return { id, created: reply === 1 };
  return { id: reply.slice(1), created: false, deduplicated: OUTCOMES[reply[0]!]! };
}
