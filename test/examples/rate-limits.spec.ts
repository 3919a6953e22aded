import { jest } from '@jest/globals';
import { main } from '../../examples/rate-limits.js';
import { startRedis, type TestRedis } from '../support/redis.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

test('the rate limits example runs as written', async () => {
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    const sent = await main(redis.url);
    expect(sent).toHaveLength(4);
    // globex was not held back by acme's hold; the held-back mail went before acme's next one
    expect(sent[0]).toBe('globex -> d@example.com');
    const acme = sent.filter((s) => s.startsWith('acme'));
    expect([...acme].sort()).toEqual(['acme -> b@example.com', 'acme -> busy@example.com', 'acme -> c@example.com']);
    expect(acme.indexOf('acme -> busy@example.com')).toBeLessThan(acme.indexOf('acme -> c@example.com'));
  } finally {
    log.mockRestore();
  }
});
