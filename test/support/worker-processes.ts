/**
 * For tests of engine workers in child processes: a private redis-server for the spec file,
 * the child processes (killed after each test), and queues on fresh prefixes (closed after
 * each test) with the environment their child workers need to reach the same queue.
 */
import { Queue, type QueueOptions } from '../../lib/index.js';
import { useEngineChildren, type EngineChild } from './engine-child.js';
import { startRedis, uniquePrefix, type TestRedis } from './redis.js';

export interface WorkerProcesses {
  readonly redis: TestRedis;
  /** A queue on a fresh prefix, and `env` for children working on it (REDIS_URL, PREFIX, QUEUE). */
  queue<D, R>(name: string, opts?: QueueOptions): { q: Queue<D, R>; env: Record<string, string> };
  /** Forks `fixture` with `env`; killed after the test. */
  fork(fixture: string, env: Record<string, string | number>): EngineChild;
}

export function useWorkerProcesses(): WorkerProcesses {
  const children = useEngineChildren();
  let redis: TestRedis | undefined;
  const queues: Array<Queue<unknown, unknown>> = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    await Promise.all(queues.splice(0).map((q) => q.close()));
  });
  afterAll(async () => {
    await redis?.stop();
  });
  return {
    get redis() {
      return redis!;
    },
    queue<D, R>(name: string, opts: QueueOptions = {}) {
      const prefix = uniquePrefix();
      const q = new Queue<D, R>(name, { connection: redis!.url, prefix, ...opts });
      queues.push(q as Queue<unknown, unknown>);
      return { q, env: { REDIS_URL: redis!.url, PREFIX: prefix, QUEUE: name } };
    },
    fork: (fixture, env) => children.fork(fixture, env),
  };
}
