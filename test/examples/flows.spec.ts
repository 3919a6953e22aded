import { jest } from '@jest/globals';
import { main } from '../../examples/flows.js';
import { startRedis, type TestRedis } from '../support/redis.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

test('the flows example runs as written', async () => {
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    expect(await main(redis.url)).toBe('published album.zip (photo-1280.jpg, photo-320.jpg, photo-640.jpg)');
    expect(log).toHaveBeenCalledWith('waiting-children');
  } finally {
    log.mockRestore();
  }
});
