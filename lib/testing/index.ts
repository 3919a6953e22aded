/**
 * relq/testing: what an app's tests need (docs/testing.md). Promised: createTestJob(), the fake
 * producer (createFakeQueue, FakeQueue, provideFakeQueue), startTestRedis() with
 * RedisServerNotFoundError, and their types. Its private server (./redis-process.ts,
 * ./watchdog.ts) ships for startTestRedis() alone; the repository's own launcher, with AUTH,
 * TLS, restarts and pauses for its fault tests, stays in tools/ and is not in the package.
 * test/packaging/surface.spec.ts holds the exact list.
 */
export { createTestJob } from './test-job.js';
export type { TestJob, TestJobOverrides } from './test-job.js';
export { createFakeQueue, FakeQueue } from './fake-queue.js';
export type { DrainedJob, FakeHandler, FakeJob, FakeQueueOptions } from './fake-queue.js';
export { provideFakeQueue } from './fake-queue-provider.js';
export { startTestRedis } from './test-redis.js';
export type { TestRedis, TestRedisOptions } from './test-redis.js';
export { RedisServerNotFoundError } from './redis-binary.js';
export type { QueueProducer } from '../core/queue/queue-producer.js';
