import { main } from '../../examples/progress.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

test('the progress and logs example runs as written', () =>
  withLogCaptured(async (log) => {
    const out = await main(redis.url);
    expect(out[0]).toBe('imported 1000 rows from customers.csv');
    expect(log).toHaveBeenCalledWith({ done: 1000, of: 1000 }, ['imported 1000 rows from customers.csv']);
  }));
