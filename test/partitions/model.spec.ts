/**
 * The Worker and BatchWorker model (test/property/worker-model.ts) over partitioned queues on a
 * Cluster of 3 masters + 3 replicas: random sequences of handlers that return, throw, reject,
 * meet a rate limit, snooze, time out or lose their lease, and workers restarted, over 2 to 6
 * partitions. After every step the slots in use equal the handlers running, a free slot finds
 * waiting jobs whatever partition holds them (the turns starve none), and every job added is
 * held once by the logical queue. RELQ_FC_SEED / RELQ_FC_PATH replay a failure.
 */
import { PartitionedQueue } from '../../lib/index.js';
import { useCluster } from '../support/cluster.js';
import { describeWorkerModel, type JobData } from '../property/worker-model.js';

const env = useCluster(3, 1);
let n = 0;

describeWorkerModel(
  'partitions',
  (opts) => new PartitionedQueue<JobData>(`model-${++n}`, { connection: env.client, prefix: 'pmod', partitions: 2 + (n % 5), ...opts }),
  25,
);
