import { main } from '../../examples/timeouts.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

test('the timeouts example runs as written', () =>
  withLogCaptured(async (log) => {
    const seen = await main(redis.url);
    expect(seen).toEqual(['attempt 1 timed out, retried: true', 'fetched https://example.com/slow (attempt 2)']);
    expect(log).toHaveBeenCalledWith(seen);
  }));
