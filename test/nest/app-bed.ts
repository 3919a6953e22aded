import { Test, type TestingModule } from '@nestjs/testing';
import type { ModuleMetadata } from '@nestjs/common';
import type { QueueRegistry } from '../../lib/nest/index.js';
import { startRedis, type TestRedis } from '../support/redis.js';

/** Compiles and initialises (onModuleInit + onApplicationBootstrap) a testing module. */
export async function startApp(metadata: ModuleMetadata): Promise<TestingModule> {
  const app = await Test.createTestingModule(metadata).compile();
  // Quiet by default (many tests provoke failures on purpose); RELQ_TEST_LOGS=1 shows them.
  app.useLogger(process.env.RELQ_TEST_LOGS ? ['error', 'warn', 'log'] : false);
  try {
    await app.init();
  } catch (err) {
    await app.close().catch(() => undefined);
    throw err;
  }
  return app;
}

/** Polls `check` until it returns a truthy value (returned) or `timeoutMs` passes. */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 5000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`);
    await sleep(20);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Waits until the app's sweeper of `queue` has completed a sweep that began after epoch ms
 * `t`, calling `each` on every poll meanwhile.
 */
export async function sweptAfter(registry: QueueRegistry, queue: string, t: number, each: () => Promise<void>): Promise<void> {
  const lastRun = () => registry.getSweepers().find((s) => s.queue === queue)?.lastRunAt ?? 0;
  // lastRunAt is stamped when a sweep ends: a first end past `t` may belong to a sweep that
  // began before it; the next one began after it.
  let end = 0;
  await waitFor(async () => {
    await each();
    return (end = lastRun()) > t;
  }, 10_000, `a sweep of ${queue} ending after ${t}`);
  await waitFor(async () => {
    await each();
    return lastRun() > end;
  }, 10_000, `a sweep of ${queue} starting after ${end}`);
}

/** A promise plus its resolve function. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export interface AppBed {
  /** The spec file's private Redis. */
  readonly redis: TestRedis;
  /** Apps started with `start`, closed after each test (a test may empty it to close them itself). */
  readonly apps: TestingModule[];
  start(...imports: NonNullable<ModuleMetadata['imports']>): Promise<TestingModule>;
}

/** A private Redis for the spec file, and every app started through the bed closed after each test. */
export function useApps(): AppBed {
  let redis: TestRedis | undefined;
  const apps: TestingModule[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    while (apps.length) await apps.pop()!.close();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  return {
    get redis() {
      return redis!;
    },
    apps,
    async start(...imports) {
      const app = await startApp({ imports });
      apps.push(app);
      return app;
    },
  };
}
