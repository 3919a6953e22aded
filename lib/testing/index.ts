// relq/testing: unit tests of processors and producers without Redis, integration tests on a
// private one. See docs/testing.md.
export { createTestJob } from './test-job.js';
export type { TestJob, TestJobOverrides } from './test-job.js';
export { createFakeQueue, FakeQueue } from './fake-queue.js';
export type { DrainedJob, FakeHandler, FakeJob, FakeQueueOptions } from './fake-queue.js';
export { provideFakeQueue } from './fake-queue-provider.js';
export { startTestRedis } from './test-redis.js';
export type { TestRedis, TestRedisOptions } from './test-redis.js';
export { RedisServerNotFoundError } from './redis-binary.js';
export type { QueueProducer } from '../core/queue/queue-producer.js';
