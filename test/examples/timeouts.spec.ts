import { jest } from '@jest/globals';
import { main } from '../../examples/timeouts.js';
import { startRedis, type TestRedis } from '../support/redis.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

test('the timeouts example runs as written', async () => {
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    const seen = await main(redis.url);
    expect(seen).toEqual(['attempt 1 timed out, retried: true', 'fetched https://example.com/slow (attempt 2)']);
    expect(log).toHaveBeenCalledWith(seen);
  } finally {
    log.mockRestore();
  }
});
