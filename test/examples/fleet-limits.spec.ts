import { main } from '../../examples/fleet-limits.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

test('the fleet limits example runs as written: 2 calls at once across both workers, then more once raised, never past 4', () =>
  withLogCaptured(async (log) => {
    const { most, raisedMost } = await main(redis.url);
    expect(most).toBe(2);
    expect(raisedMost).toBeGreaterThan(2);
    expect(raisedMost).toBeLessThanOrEqual(4);
    expect(log).toHaveBeenCalledWith('at most 2 calls at once');
    expect(log).toHaveBeenCalledWith(`then at most ${raisedMost} at once`);
  }));
