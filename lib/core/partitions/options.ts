import { ValidationError } from '../errors.js';
import { resolveQueueOptions, type ResolvedQueueOptions } from '../queue/options.js';
import type { QueueOptions } from '../queue/types.js';
import { assertInt, assertQueueName, describe } from '../validate.js';
import { PARTITION_BUCKETS } from './layout.js';
import { checkGlobalConcurrency, checkRateLimit } from './shares.js';
import type { PartitionedQueueOptions } from './types.js';

/** Queue options whose limit is queue-wide and that partitions do not share yet (docs/scale-out.md); `globalConcurrency` is shared (shares.ts). */
const QUEUE_WIDE = ['bound', 'exclusive'] as const;

/**
 * The one check of a partitioned queue's own rules: its name, its number of partitions, and
 * the queue options it refuses. The rest are a queue's options, checked by the queue's own
 * validator (queue/options.ts), all before anything connects. Returns the options each
 * partition is built with.
 */
export function resolvePartitionedOptions(name: unknown, options: PartitionedQueueOptions): { partitions: number; queueOptions: QueueOptions; resolved: ResolvedQueueOptions } {
  assertQueueName(name);
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ValidationError('queue options', `must be an object with partitions, got ${describe(options)}`);
  }
  const { partitions, ...queueOptions } = options;
  if (/[{}]/.test(name)) {
    throw new ValidationError('queue name', "of a partitioned queue must not contain '{' or '}': its partitions are spread over the Cluster's slots, not kept in one");
  }
  assertInt('partitions', partitions, { min: 1, max: PARTITION_BUCKETS });
  for (const key of QUEUE_WIDE) {
    if ((queueOptions as QueueOptions)[key] !== undefined) {
      throw new ValidationError(key, 'is not supported on a partitioned queue: its limit is queue-wide and partitions do not share it (docs/scale-out.md)');
    }
  }
  if (queueOptions.globalConcurrency !== undefined) checkGlobalConcurrency(queueOptions.globalConcurrency, partitions);
  if (queueOptions.limiter !== undefined) checkRateLimit(queueOptions.limiter, partitions);
  return { partitions, queueOptions, resolved: resolveQueueOptions(name, queueOptions) };
}
