/**
 * A producer for unit tests without Redis: the adds of a `Queue`, recorded in memory, and a
 * `drain()` that runs what was added through a handler. Each job's data and options are checked
 * by the queue's own validators, so a test fails on what a real add would refuse.
 */
import { DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_POLICY } from '../core/defaults.js';
import { FlowJobExistsError } from '../core/flows/errors.js';
import { ValidationError } from '../core/errors.js';
import type { AddFlowOptions, FlowJob, FlowResult } from '../core/flows/types.js';
import { markCreated, planFlow } from '../core/flows/plan.js';
import { IdGenerator } from '../core/adds/ids.js';
import { policyOver, prepareJob, type CheckedPolicy } from '../core/adds/job-options.js';
import type { QueueProducer } from '../core/queue/queue-producer.js';
import { decodeRecord, encodeRecord, policyOf } from '../core/redis/record.js';
import type { AddResult, BulkJob, JobOptions, JobPolicy } from '../core/adds/types.js';
import { assertOptions, assertQueueName, toJson } from '../core/validate.js';
import { checkDefaults, type ModuleDefaults, type QueueDefaults } from '../nest/queues/queue-defaults.js';
import { TAKE_MODULE_DEFAULTS, type QueueStandIn } from '../nest/queues/queue-stand-in.js';
import { createTestJob, type TestJob } from './test-job.js';

export interface FakeQueueOptions {
  /**
   * The queue's defaults, as `registerQueue({ defaults })` takes them (only `job` matters to a
   * fake). Swapped into a Nest module for its queue, the fake also takes the defaults the module
   * gives that queue (forRoot's under registerQueue's), with these over them.
   */
  defaults?: QueueDefaults;
}

/** A job as a FakeQueue recorded it. */
export interface FakeJob<Data> {
  readonly id: string;
  /** The job's name ('' for none), as a handler sees it. */
  readonly name: string;
  /** The data as stored: a JSON copy of what was added. */
  readonly data: Data;
  /** The options as given (undefined for none). */
  readonly opts?: JobOptions;
  /** The policy the job got: its options over the queue's defaults. */
  readonly policy: Readonly<JobPolicy>;
  readonly priority: number;
  readonly group?: string;
  /** A flow's child: its parent's id. */
  readonly parentId?: string;
  readonly via: 'add' | 'addBulk' | 'tryAdd' | 'tryAddBulk' | 'addFlow';
}

/** What `drain()` did with one job: the job the handler got, and what it returned or threw. */
export type DrainedJob<Data, Result> = { job: TestJob<Data> } & ({ status: 'completed'; result: Result } | { status: 'failed'; error: unknown });

/** A handler as `drain()` calls it: a processor method taking `Job<Data>` fits. */
export type FakeHandler<Data, Result> = (job: TestJob<Data>) => Promise<Result> | Result;

export class FakeQueue<Data = unknown, Result = unknown> implements QueueProducer<Data>, QueueStandIn {
  /**
   * Every job added (duplicates of an existing jobId are not: nothing was written), in order.
   * A deduplication id is checked, not followed: every add that carries one is recorded.
   */
  readonly added: Array<FakeJob<Data>> = [];
  /** Its own job defaults, as given (checked). */
  readonly #own: CheckedPolicy | undefined;
  #defaults: Readonly<JobPolicy>;
  readonly #ids = new IdGenerator();
  /** Ids a later add would find: a jobId is a duplicate once added. */
  readonly #known = new Set<string>();
  #drained = 0;

  constructor(
    readonly name: string,
    options: FakeQueueOptions = {},
  ) {
    assertQueueName(name);
    assertOptions('options', options, ['defaults']);
    this.#own = checkDefaults(options.defaults).job;
    this.#defaults = this.#own ? policyOver(DEFAULT_POLICY, this.#own) : DEFAULT_POLICY;
  }

  /** Swapped in for a queue of a Nest module: the module's job defaults, under the fake's own. @internal */
  [TAKE_MODULE_DEFAULTS](defaults: ModuleDefaults): void {
    const module = defaults.job ?? DEFAULT_POLICY;
    this.#defaults = this.#own ? policyOver(module, this.#own) : module;
  }

  async add(data: Data, opts?: JobOptions): Promise<AddResult> {
    return this.#addMany([{ data, opts }], 'add')[0]!;
  }

  async addBulk(jobs: ReadonlyArray<BulkJob<Data>>, opts: { waitMs?: number } = {}): Promise<AddResult[]> {
    assertOptions('addBulk options', opts, ['waitMs']);
    return this.#addMany(jobs, 'addBulk');
  }

  /** As `add()`: a FakeQueue has no bound, so it never refuses for room. */
  async tryAdd(data: Data, opts?: JobOptions): Promise<AddResult> {
    return this.#addMany([{ data, opts }], 'tryAdd')[0]!;
  }

  async tryAddBulk(jobs: ReadonlyArray<BulkJob<Data>>): Promise<AddResult[]> {
    return this.#addMany(jobs, 'tryAddBulk');
  }

  async addFlow(flow: FlowJob<Data>, opts: AddFlowOptions = {}): Promise<FlowResult> {
    const ctx = { queue: this.name, tagOf: (name: string) => name, defaults: this.#defaults, maxPayloadBytes: DEFAULT_MAX_PAYLOAD_BYTES, ids: this.#ids, now: Date.now() };
    const { items, queues, result } = planFlow(flow, opts, ctx);
    if (queues.length > 1) {
      throw new ValidationError(queues[1]!.field, `names queue '${queues[1]!.name}': a fake queue records the jobs of its own queue only, not flows across queues`);
    }
    if (this.#known.has(result.id)) return markCreated(result, false);
    const taken = items.slice(1).find((item) => item.custom === 1 && this.#known.has(item.id));
    if (taken) throw new FlowJobExistsError(this.name, taken.id);
    const given = flowOptions(flow);
    items.forEach((item, i) => this.#record(item.id, item.record, given[i], 'addFlow'));
    return markCreated(result, true);
  }

  /** Jobs added and not drained yet, in order. */
  get pending(): Array<FakeJob<Data>> {
    return this.added.slice(this.#drained);
  }

  /**
   * Runs each pending job once through `handler`, in the order added, a flow's parent after its
   * children (its `childrenResults()` answers theirs). No retries, delays or priorities: a
   * test of those belongs on a real Redis (`startTestRedis()`).
   */
  async drain(handler: FakeHandler<Data, Result>): Promise<Array<DrainedJob<Data, Result>>> {
    const batch = this.pending;
    this.#drained = this.added.length;
    const results = new Map<string, unknown>();
    const done: Array<DrainedJob<Data, Result>> = [];
    const { order, children } = runOrder(batch);
    for (const fake of order) {
      const completed = (children.get(fake.id) ?? []).filter((c) => results.has(c.id));
      const job = createTestJob(fake.data, {
        id: fake.id,
        name: fake.name,
        priority: fake.priority,
        policy: fake.policy,
        ...(fake.group === undefined ? {} : { group: fake.group }),
        childrenResults: Object.fromEntries(completed.map((c) => [c.id, results.get(c.id)])),
      });
      try {
        const result = await handler(job);
        results.set(fake.id, result ?? null);
        done.push({ job, status: 'completed', result });
      } catch (error) {
        done.push({ job, status: 'failed', error });
      }
    }
    return done;
  }

  /** Forgets every job (a jobId may be added again). */
  clear(): void {
    this.added.length = 0;
    this.#known.clear();
    this.#drained = 0;
  }

  #addMany(jobs: ReadonlyArray<BulkJob<Data>>, via: FakeJob<Data>['via']): AddResult[] {
    const now = Date.now();
    const bulk = via === 'addBulk' || via === 'tryAddBulk';
    // every job checked before any is recorded, as the queue writes all or nothing
    const prepared = jobs.map((job, i) => {
      if (bulk) assertOptions(`jobs[${i}]`, job, ['data', 'opts']);
      const p = prepareJob(bulk ? `jobs[${i}].opts` : 'opts', job.opts, this.#defaults, now);
      const dataJson = toJson(bulk ? `jobs[${i}].data` : 'data', job.data, DEFAULT_MAX_PAYLOAD_BYTES);
      return { id: p.id ?? this.#ids.next(), custom: p.id !== undefined, record: encodeRecord(p.meta, dataJson), opts: job.opts };
    });
    return prepared.map(({ id, custom, record, opts }) => {
      if (custom && this.#known.has(id)) return { id, created: false };
      this.#record(id, record, opts, via);
      return { id, created: true };
    });
  }

  #record(id: string, record: string, opts: JobOptions | undefined, via: FakeJob<Data>['via']): void {
    const { meta, data } = decodeRecord<Data>(record);
    this.#known.add(id);
    this.added.push({
      id,
      name: meta.n ?? '',
      data,
      ...(opts === undefined ? {} : { opts }),
      policy: policyOf(meta),
      priority: meta.p ?? 0,
      ...(meta.g === undefined ? {} : { group: meta.g }),
      ...(meta.pa === undefined ? {} : { parentId: meta.pa }),
      via,
    });
  }
}

/** A FakeQueue for `name`; see FakeQueue. */
export function createFakeQueue<Data = unknown, Result = unknown>(name: string, options?: FakeQueueOptions): FakeQueue<Data, Result> {
  return new FakeQueue<Data, Result>(name, options);
}

/** Each job's options of a flow, in planFlow's order (depth first, parents before children). */
function flowOptions(flow: FlowJob<unknown>): Array<JobOptions | undefined> {
  const out: Array<JobOptions | undefined> = [];
  const stack: Array<FlowJob<unknown>> = [flow];
  for (let j = stack.pop(); j; j = stack.pop()) {
    out.push(j.opts);
    stack.push(...[...(j.children ?? [])].reverse());
  }
  return out;
}

/** The jobs of `batch` in the order added, each flow's children (depth first) before their parent. */
function runOrder<Data>(batch: ReadonlyArray<FakeJob<Data>>): { order: Array<FakeJob<Data>>; children: Map<string, Array<FakeJob<Data>>> } {
  const ids = new Set(batch.map((j) => j.id));
  const children = new Map<string, Array<FakeJob<Data>>>();
  for (const j of batch) {
    if (j.parentId !== undefined && ids.has(j.parentId)) children.set(j.parentId, [...(children.get(j.parentId) ?? []), j]);
  }
  const order: Array<FakeJob<Data>> = [];
  const visit = (j: FakeJob<Data>): void => {
    for (const c of children.get(j.id) ?? []) visit(c);
    order.push(j);
  };
  for (const j of batch) if (j.parentId === undefined || !ids.has(j.parentId)) visit(j);
  return { order, children };
}
