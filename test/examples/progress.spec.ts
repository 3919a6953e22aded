import { jest } from '@jest/globals';
import { main } from '../../examples/progress.js';
import { startRedis, type TestRedis } from '../support/redis.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

test('the progress and logs example runs as written', async () => {
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    const out = await main(redis.url);
    expect(out[0]).toBe('imported 1000 rows from customers.csv');
    expect(log).toHaveBeenCalledWith({ done: 1000, of: 1000 }, ['imported 1000 rows from customers.csv']);
  } finally {
    log.mockRestore();
  }
});
