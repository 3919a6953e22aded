import type { JobOptions } from '../adds/types.js';

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

/** A job's options within a flow: a parent's become pending only when its children completed. */
export type FlowJobOptions = Omit<JobOptions, 'waitMs'>;

/**
 * One job of a flow and, optionally, its children. A job with children waits in the state
 * 'waiting-children' until every child completed, then becomes pending; its handler reads the
 * children's results with `job.childrenResults()`. A parent cannot be delayed or lifo.
 */
export interface FlowJob<Data = unknown> {
  data: Data;
  opts?: FlowJobOptions;
  /** Jobs that must complete before this one runs; each may have children of its own. */
  children?: ReadonlyArray<FlowJob<Data>>;
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
