/**
 * Found by test/property/fuzz.spec.ts: getJobs and clean described a refused state or order
 * with JSON.stringify, which throws on a BigInt or a cyclic object, so they rejected with a
 * TypeError instead of the documented ValidationError. They describe it as every other
 * validator does now (validate.ts's describe(), which never throws).
 */
import { Queue, ValidationError } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';

let server: TestRedis;

beforeAll(async () => {
  server = await startRedis();
});

afterAll(async () => {
  await server?.stop();
});

async function refusal(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return 'a result';
  } catch (err) {
    return err instanceof ValidationError ? `ValidationError(${err.field})` : `${(err as Error).name}: ${(err as Error).message}`;
  }
}

test('getJobs and clean refuse a state or order JSON.stringify throws on with a ValidationError', async () => {
  const q = new Queue<unknown, unknown>('found', { connection: server.url, prefix: uniquePrefix() });
  try {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect({
      getJobsState: await refusal(() => q.getJobs(1n as never)),
      getJobsOrder: await refusal(() => q.getJobs('pending', { order: 1n as never })),
      cleanState: await refusal(() => q.clean(cyclic as never)),
    }).toEqual({
      getJobsState: 'ValidationError(state)',
      getJobsOrder: 'ValidationError(order)',
      cleanState: 'ValidationError(state)',
    });
  } finally {
    await q.close();
  }
});
