import type { JobOptions } from '../adds/types.js';
import type { JobState } from '../management/read-types.js';

/** Flows of parent and child jobs (docs/flows.md). */

/**
 * What a parent does when one of its children dies (or is removed before it completed), BullMQ's
 * option in brackets: 'fail' dies too (failParentOnFailure); 'ignore' goes on without it, the
 * child's error kept in the parent's `children.failed` (ignoreDependencyOnFailure); 'continue'
 * becomes pending at once, whatever its other children do, the error kept likewise
 * (continueParentOnFailure); 'remove' goes on without it and keeps nothing
 * (removeDependencyOnFailure).
 */
export type ChildFailurePolicy = 'fail' | 'ignore' | 'continue' | 'remove';

/**
 * A job's options within a flow: a parent's become pending only when its children completed.
 * No `deduplication`: a flow is added whole (a root `jobId` makes the whole flow a duplicate).
 */
export type FlowJobOptions = Omit<JobOptions, 'waitMs' | 'deduplication'>;

/**
 * One job of a flow and, optionally, its children. A job with children waits in the state
 * 'waiting-children' until every child completed, then becomes pending; its handler reads the
 * children's results with `job.childrenResults()`. A parent cannot be delayed or lifo.
 */
export interface FlowJob<Data = unknown> {
  data: Data;
  opts?: FlowJobOptions;
  /**
   * Jobs that must complete before this one runs; each may have children of its own. A child
   * in its parent's queue carries that queue's `Data`; one that names another queue, that
   * queue's (FlowJobElsewhere).
   */
  children?: ReadonlyArray<FlowJobHere<Data> | FlowJobElsewhere>;
  /**
   * A child only: what its parent does if this job dies (dead-lettered). Default: the
   * `onChildFailure` of `addFlow()`, itself 'fail' by default.
   */
  onFailure?: ChildFailurePolicy;
  /**
   * The queue this job belongs to, of the same prefix (BullMQ's `queueName`). Default: its
   * parent's queue; the root's, the queue `addFlow()` is called on. On Redis Cluster the flow's
   * queues must share a slot: names with one shared `{tag}` (`'{shop}-email'`), else
   * CrossQueueFlowError (docs/flows.md).
   */
  queue?: string;
}

/**
 * A job of a flow in another queue than its parent's: its data is that queue's, so it is not
 * checked against the parent queue's `Data` (a `FlowJob<OtherData>` fits).
 */
export interface FlowJobElsewhere extends FlowJob<unknown> {
  queue: string;
}

/** A job of a flow in its parent's queue (no `queue`, or that queue's name): that queue's `Data`. */
export type FlowJobHere<Data> = FlowJob<Data> & { queue?: undefined };

/** Options of `addFlow()`. */
export interface AddFlowOptions {
  /** What a parent does when a child dies, for children without their own `onFailure`. Default 'fail'. */
  onChildFailure?: ChildFailurePolicy;
}

/** The ids of a flow's jobs, in the shape it was given. */
export interface FlowResult {
  id: string;
  /**
   * False when nothing was written: the root's `jobId` exists (or is within its idempotency
   * window). Then the whole flow is a duplicate, and the children's ids are those asked for.
   */
  created: boolean;
  children: FlowResult[];
}

/** What a parent's children left it so far (`getJob()` of a parent). */
export interface FlowChildren {
  /** Children not finished yet: the parent runs once this is 0. */
  unfinished: number;
  /** Child id → its result (`null` when it returned none), for each child that completed. */
  results: Record<string, unknown>;
  /**
   * Child id → its error (`'removed'` for one removed before it completed), for each child that
   * died and that the parent went on without by its policy 'ignore' or 'continue'.
   */
  failed: Record<string, string>;
}

/** A flow parent's child as `getDependencies()` and `getFlow()` answer it. */
export interface FlowDependency {
  id: string;
  /** The queue it lives in. */
  queue: string;
  /** null: gone (removed, or past its retention). */
  state: JobState | null;
}

/** One page of a parent's children (`queue.getDependencies()`), in the order the flow gave them. */
export interface FlowDependencies {
  /** The parent's state, null when there is no such job. */
  state: JobState | null;
  /** How many children it has in all (none: 0, also for a job that is no parent). */
  total: number;
  children: FlowDependency[];
}

/** Options of `queue.getDependencies()`. */
export interface DependencyPageOptions {
  /** The first child to answer, 0-based. Default 0. */
  offset?: number;
  /** How many children at most. Default 100. */
  limit?: number;
}

/** A job of a flow and its children, as `queue.getFlow()` answers it. */
export interface FlowNode extends FlowDependency {
  /** How many children it has in all: `children` may hold fewer (`maxChildren`, `depth`). */
  total: number;
  children: FlowNode[];
}

/** Options of `queue.getFlow()`. */
export interface GetFlowOptions {
  /** Levels of children to read below the job (0: the job alone). Default 10. */
  depth?: number;
  /** Children to read of each parent, the first ones of the flow. Default 100. */
  maxChildren?: number;
}
