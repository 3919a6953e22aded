import { main } from '../../examples/rate-limits.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

test('the rate limits example runs as written', () =>
  withLogCaptured(async (log) => {
    const sent = await main(redis.url);
    expect(sent).toHaveLength(4);
    // globex was not held back by acme's hold; the held-back mail went before acme's next one
    expect(sent[0]).toBe('globex -> d@example.com');
    const acme = sent.filter((s) => s.startsWith('acme'));
    expect([...acme].sort()).toEqual(['acme -> b@example.com', 'acme -> busy@example.com', 'acme -> c@example.com']);
    expect(acme.indexOf('acme -> busy@example.com')).toBeLessThan(acme.indexOf('acme -> c@example.com'));
  }));
