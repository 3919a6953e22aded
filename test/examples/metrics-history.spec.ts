import { main } from '../../examples/metrics-history.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

test('the metrics history example runs as written', () =>
  withLogCaptured(async (log) => {
    expect(await main(redis.url)).toEqual({ completed: 4, dead: 1, timed: 5 });
    expect(log).toHaveBeenCalledWith(expect.stringMatching(/^completed 4, dead 1, run time p50 \d+(\.\d)? ms, p99 \d+ ms$/));
  }));
