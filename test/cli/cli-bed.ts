/**
 * What the CLI specs share: the CLI built once for the spec file, a private Redis, and the
 * queues and raw clients the tests open on it, all closed after the file.
 */
import type { Redis } from 'ioredis';
import { Queue } from '../../lib/index.js';
import { CliHarness, type CliRun } from '../support/cli-harness.js';
import { redisClient, startRedis, type TestRedis } from '../support/redis.js';

export interface CliBed {
  readonly cli: CliHarness;
  /** The private Redis (there once the file's tests run). */
  readonly redis: TestRedis;
  /** A Queue on the bed's Redis. */
  queue<D = unknown>(name: string, prefix: string): Queue<D>;
  /** A raw client on the bed's Redis. */
  client(): Redis;
  /** Runs `relq --redis <url> --prefix <prefix> ...args`. */
  relq(prefix: string, ...args: string[]): Promise<CliRun>;
}

export function useCliBed(): CliBed {
  const cli = new CliHarness();
  let redis: TestRedis | undefined;
  const queues: Queue[] = [];
  const clients: Redis[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    cli.build();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(queues.map((q) => q.close()));
    for (const c of clients) c.disconnect();
    await cli.stopAll();
    await redis?.stop();
  });
  return {
    cli,
    get redis(): TestRedis {
      return redis!;
    },
    queue<D = unknown>(name: string, prefix: string): Queue<D> {
      const q = new Queue<D>(name, { connection: redis!.url, prefix });
      queues.push(q as Queue);
      return q;
    },
    client(): Redis {
      const c = redisClient(redis!);
      clients.push(c);
      return c;
    },
    relq: (prefix, ...args) => cli.run(['--redis', redis!.url, '--prefix', prefix, ...args]),
  };
}
