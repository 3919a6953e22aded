import { main } from '../../examples/step-jobs.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

test('the step jobs and cancellation example runs as written', () =>
  withLogCaptured(async (log) => {
    const out = await main(redis.url);
    expect(out.exported).toBe('q3 exported in 3 steps');
    expect(out.cancelled).toMatch(/^job .+ was cancelled: not needed any more$/);
    expect(log).toHaveBeenCalledWith('dead');
  }));
