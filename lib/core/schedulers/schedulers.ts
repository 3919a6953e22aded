import { DEFAULT_TICK_LIMIT, MAX_SCHEDULER_ID_LENGTH } from '../defaults.js';
import { ValidationError } from '../errors.js';
import { instruments, observedAdd, stampAll } from '../instrumentation/index.js';
import { encodeRecord } from '../redis/record.js';
import type { SchedulerInfo, SchedulerJobOptions, SchedulerSpec, SchedulerTemplate, SchedulerTickResult } from './types.js';
import { assertInt, assertJobId, assertOptions, toJson } from '../validate.js';
import { prepareJob } from '../adds/job-options.js';
import type { QueueContext } from '../queue/queue-context.js';
import { checkSpec, planAdvance, slotAfter, type SlotPlan } from './spec.js';
import {
  schedulerAdvanceScript,
  schedulerDueScript,
  schedulerListScript,
  schedulerNowScript,
  schedulerRemoveScript,
  schedulerUpsertScript,
  type Stored,
  type StoredConfig,
} from './scripts.js';

/** Options a template may not hold: the scheduler sets each job's id and time. */
const SET_BY_SCHEDULER = ['jobId', 'delayMs', 'runAt', 'lifo', 'waitMs'] as const;
/** The id of the job of one slot: the slot's idempotency key. */
export function schedulerJobId(id: string, slot: number): string {
  return `repeat:${id}:${slot}`;
}

/** One due scheduler of a tick: its slots to write, and the record of their jobs. */
interface SlotMove {
  s: Stored;
  plan: SlotPlan;
  record: string;
}

/**
 * Job schedulers (docs/schedulers.md): each slot's job is made ahead of time as a delayed job
 * whose id is the slot's idempotency key, so the delayed-job machinery makes it pending on
 * time. A tick (runSchedulers(), run by a SchedulerTicker or the Nest sweeper) moves each
 * due scheduler on: it computes the following slot from the Redis time of its read (cron
 * needs JS) and writes it with a compare-and-set on the scheduler's next slot
 * (scheduler-advance.lua), so one process wins per slot however many tick.
 */
export class Schedulers {
  constructor(private readonly ctx: QueueContext) {}

  /**
   * One script writes it, whatever was stored (scheduler-upsert.lua): of upserts of one id at
   * once the last to run wins, and none has to read and try again. False when the same
   * scheduler was stored (every instance upserts at startup).
   */
  async upsert(id: string, spec: SchedulerSpec, template: SchedulerTemplate = {}): Promise<boolean> {
    const { raw, config } = this.prepare(id, spec, template);
    const now = await this.ctx.run(schedulerNowScript, {});
    const first = slotAfter(config.spec, now - 1);
    const job = { record: first === null ? '' : withTime(recordOf(raw), now) };
    const send = () => this.ctx.run(schedulerUpsertScript, { events: this.ctx.eventsFlag, id, config: raw, firstSlot: first, record: job.record });
    // 0: the same scheduler was stored; 2: written with the first slot's job
    const written =
      first === null || instruments.length === 0
        ? await send()
        : await observedAdd({ queue: this.ctx.name, op: 'upsertScheduler', ids: [schedulerJobId(id, first)] }, (c) => stampAll([job], c), send, (r) => [r === 2]);
    return written > 0;
  }

  async list(): Promise<SchedulerInfo[]> {
    const items = await this.ctx.run(schedulerListScript, {});
    return items.sort((a, b) => (a.id < b.id ? -1 : 1)).map(toInfo);
  }

  async remove(id: string): Promise<boolean> {
    assertJobId(id, 'id');
    return this.ctx.run(schedulerRemoveScript, { events: this.ctx.eventsFlag, id });
  }

  /** One tick: every due scheduler (up to `limit`) moved on to its next slot. */
  async tick(opts: { limit?: number } = {}): Promise<SchedulerTickResult> {
    assertOptions('runSchedulers options', opts, ['limit']);
    const limit = opts.limit ?? DEFAULT_TICK_LIMIT;
    assertInt('limit', limit, { min: 1, max: 10_000 });
    const { now, earliest, items } = await this.ctx.run(schedulerDueScript, { limit });
    let nextDueAt = items.length === limit ? now : earliest; // a full page: more may be due
    const moves: SlotMove[] = [];
    for (const s of items) {
      if (s.next === null) continue;
      const plan = planAdvance(s.config.spec, s.next, now, s.made);
      moves.push({ s, plan, record: withTime(s.record, now) });
      // A lost race moved it to the same next slot: wake for it either way.
      if (plan.next !== null && (nextDueAt === null || plan.next < nextDueAt)) nextDueAt = plan.next;
    }
    if (moves.length === 0) return { advanced: 0, added: 0, now, nextDueAt };
    const send = () =>
      this.ctx.run(schedulerAdvanceScript, {
        events: this.ctx.eventsFlag,
        moves: moves.map(({ s, plan, record }) => ({ id: s.id, version: s.version, next: s.next!, catchUp: plan.catchUp, newNext: plan.next, record })),
      });
    // Per move: -1 lost the CAS, else bit 1 the catch-up job created, bit 2 the next slot's.
    const r = instruments.length === 0 ? await send() : await this.observedTick(moves, send);
    const won = r.filter((x) => x >= 0);
    return { advanced: won.length, added: won.reduce((a, x) => a + (x & 1) + (x >> 1), 0), now, nextDueAt };
  }

  /** A tick's script call under the instruments' add scope: every slot job it may create. */
  private observedTick(moves: SlotMove[], send: () => Promise<number[]>): Promise<number[]> {
    const jobs: Array<{ id: string; move: number; bit: number }> = [];
    moves.forEach(({ s, plan }, move) => {
      if (plan.catchUp !== null) jobs.push({ id: schedulerJobId(s.id, plan.catchUp), move, bit: 1 });
      if (plan.next !== null) jobs.push({ id: schedulerJobId(s.id, plan.next), move, bit: 2 });
    });
    if (jobs.length === 0) return send(); // schedulers that ended: no job to add
    return observedAdd(
      { queue: this.ctx.name, op: 'runSchedulers', ids: jobs.map((j) => j.id) },
      (c) => stampAll(moves, c),
      send,
      (r) => jobs.map(({ move, bit }) => r[move]! >= 0 && (r[move]! & bit) !== 0),
    );
  }

  /** Checks everything and builds the stored config; nothing is written before this passed. */
  private prepare(id: string, spec: SchedulerSpec, template: SchedulerTemplate): { raw: string; config: StoredConfig } {
    assertJobId(id, 'id');
    if (id.length > MAX_SCHEDULER_ID_LENGTH) throw new ValidationError('id', `must be at most ${MAX_SCHEDULER_ID_LENGTH} characters, got ${id.length}`);
    const stored = checkSpec('spec', spec);
    assertOptions('template', template, ['data', 'opts']);
    const given: unknown = template.opts ?? {};
    if (given === null || typeof given !== 'object' || Array.isArray(given)) assertOptions('template.opts', given, []); // "must be an object"
    const opts = given as SchedulerJobOptions & Record<string, unknown>; // its keys are prepareJob's to check
    for (const k of SET_BY_SCHEDULER) {
      if (opts[k] !== undefined) throw new ValidationError(`template.opts.${k}`, "is set by the scheduler (each slot's job id and due time)");
    }
    if (opts.deduplication !== undefined) {
      throw new ValidationError('template.opts.deduplication', "is not for schedulers: each slot's job id already makes one job per slot");
    }
    // The one job-options validator; the placeholder id gives the record its idempotency-key flags.
    const { meta } = prepareJob('template.opts', { ...opts, jobId: schedulerJobId(id, 0) }, this.ctx.defaults, 0);
    const dataJson = toJson('template.data', template.data ?? null, this.ctx.maxPayloadBytes);
    const config: StoredConfig = { spec: stored, opts: JSON.parse(JSON.stringify(opts)) as SchedulerJobOptions };
    return { raw: `${JSON.stringify(config)}\n${encodeRecord(meta, dataJson)}`, config };
  }
}

function recordOf(raw: string): string {
  return raw.slice(raw.indexOf('\n') + 1);
}

/** The record template is created at 0 (so that equal schedulers store equal text); a job gets its real time. */
function withTime(record: string, now: number): string {
  return record.replace(/^\{"t":0/, `{"t":${now}`);
}

function toInfo(s: Stored): SchedulerInfo {
  const data: unknown = JSON.parse(s.record.slice(s.record.indexOf('\n') + 1));
  const template: SchedulerTemplate = { data };
  if (Object.keys(s.config.opts).length > 0) template.opts = s.config.opts;
  return { id: s.id, spec: s.config.spec, template, nextRunAt: s.next, made: s.made };
}
