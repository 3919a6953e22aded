import { main } from '../../examples/deduplication.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

test('the deduplication and retention example runs as written', () =>
  withLogCaptured(async (log) => {
    const out = await main(redis.url);
    expect(out.outcomes).toEqual(['created', 'replaced', 'replaced']);
    expect(out.ran).toEqual([['email']]);
    expect(out.kept).toBe(2);
    expect(log).toHaveBeenCalledWith(2);
  }));
