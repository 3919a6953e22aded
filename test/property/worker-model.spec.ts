/**
 * The Worker and BatchWorker model (test/property/worker-model.ts) over a queue on a private
 * Redis. RELQ_FC_SEED / RELQ_FC_PATH replay a failure; RELQ_FC_RUNS sets the number of
 * sequences (default 40).
 */
import { Queue } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { describeWorkerModel, type JobData } from './worker-model.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

describeWorkerModel('a queue', (opts) => new Queue<JobData>('slots', { connection: redis.url, prefix: uniquePrefix(), ...opts }));
