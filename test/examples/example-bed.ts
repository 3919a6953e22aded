/**
 * What every example spec needs: one private Redis for the spec file, whose URL an example
 * takes as users pass theirs, and console.log captured while an example runs (examples print
 * what they do; the specs check it).
 */
import { jest } from '@jest/globals';
import { startRedis, type TestRedis } from '../support/redis.js';

export type LogSpy = jest.Spied<typeof console.log>;

/** Starts the server before the file's tests and stops it after them; `url` is read once started. */
export function useExampleRedis(): { readonly url: string } {
  let redis: TestRedis | undefined;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());
  return {
    get url(): string {
      return redis!.url;
    },
  };
}

/** Runs `example` with console.log captured, and gives console.log back whatever happens. */
export async function withLogCaptured<T>(example: (log: LogSpy) => Promise<T>): Promise<T> {
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    return await example(log);
  } finally {
    log.mockRestore();
  }
}
