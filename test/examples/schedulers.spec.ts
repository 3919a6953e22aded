import { main } from '../../examples/schedulers.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

test('the schedulers example runs as written', () =>
  withLogCaptured(async (log) => {
    const seen = await main(redis.url);
    expect(seen).toHaveLength(3);
    const slots = seen.map((id) => Number(id.split(':')[2]));
    // One job per 200 ms slot. A tick delayed past the next slot (a busy machine) makes one
    // job for the slots it missed, the latest one's (docs/schedulers.md, missed: 'once').
    for (const gap of [slots[1]! - slots[0]!, slots[2]! - slots[1]!]) {
      expect(gap).toBeGreaterThan(0);
      expect(gap % 200).toBe(0);
    }
    expect(log).toHaveBeenCalledWith('heartbeat', 3, 'ended');
  }));
