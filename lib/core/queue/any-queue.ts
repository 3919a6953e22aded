import type { PartitionedQueue } from '../partitions/partitioned-queue.js';
import type { Queue } from './queue.js';

/**
 * A queue as producers, readers and managers see it: a Queue, or a PartitionedQueue (one
 * logical queue over many partitions, docs/scale-out.md). The dashboard, RelqMetrics, the CLI
 * and the Nest module take either.
 */
export type AnyQueue<Data = unknown, Result = unknown> = Queue<Data, Result> | PartitionedQueue<Data, Result>;
