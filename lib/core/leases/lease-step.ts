import type { NotReplicatedError } from '../errors.js';
import type { Lease } from './types.js';

/** Result of one lease round trip (settles folded in). */
export interface LeaseStep<Data> {
  /**
   * Per settle item, whether it took effect; undefined: not sent yet (a partitioned queue's
   * partition whose master is away), kept for a later call.
   */
  settled: Array<boolean | undefined>;
  leases: Array<Lease<Data>>;
  /** Redis clock at the time of the call. */
  now: number;
  /** When the next delayed job becomes due, if known. */
  nextDue: number | undefined;
  paused: boolean;
  /** The queue is closed (closeQueue) and nothing is left unfinished: consumers should stop. */
  closed: boolean;
  /** The queue was deleted (deleteQueue). */
  deleted: boolean;
  /** Ids whose job record was gone (evicted or lost) that this call dropped from the queue. */
  ghosts: number;
  /** With `durability`: the settles of this call were applied, but not confirmed by enough replicas. */
  notReplicated?: NotReplicatedError<boolean[]>;
}
