import { jest } from '@jest/globals';
import { main } from '../../examples/schedulers.js';
import { startRedis, type TestRedis } from '../support/redis.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

test('the schedulers example runs as written', async () => {
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    const seen = await main(redis.url);
    expect(seen).toHaveLength(3);
    const slots = seen.map((id) => Number(id.split(':')[2]));
    expect(slots[1]! - slots[0]!).toBe(200);
    expect(slots[2]! - slots[1]!).toBe(200);
    expect(log).toHaveBeenCalledWith('heartbeat', 3, 'ended');
  } finally {
    log.mockRestore();
  }
});
