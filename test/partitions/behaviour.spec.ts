/**
 * The behaviour suite of a queue (test/support/logical-behaviour.ts) on a Redis Cluster of
 * 3 masters + 3 replicas, run over a plain queue and over a queue of 6 partitions: the same
 * calls, the same expectations. A partitioned queue's jobs spread over the three masters, so
 * every test here crosses partitions (groups, pages, events, dead letters, retention).
 */
import { PartitionedQueue, Queue } from '../../lib/index.js';
import { useCluster } from '../support/cluster.js';
import { describeLogicalBehaviour, type OpenQueue } from '../support/logical-behaviour.js';

const env = useCluster(3, 1);

const plain: OpenQueue = (name, opts = {}) => new Queue(name, { ...opts, connection: env.client, prefix: 'lbq' });
const partitioned: OpenQueue = (name, opts = {}) => new PartitionedQueue(name, { ...opts, connection: env.client, prefix: 'lbp', partitions: 6 });

describeLogicalBehaviour('a plain queue on a Cluster', () => plain);
describeLogicalBehaviour('6 partitions on 3 masters', () => partitioned);
