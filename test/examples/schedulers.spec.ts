import { main } from '../../examples/schedulers.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

test('the schedulers example runs as written', () =>
  withLogCaptured(async (log) => {
    const seen = await main(redis.url);
    expect(seen).toHaveLength(3);
    const slots = seen.map((id) => Number(id.split(':')[2]));
    expect(slots[1]! - slots[0]!).toBe(200);
    expect(slots[2]! - slots[1]!).toBe(200);
    expect(log).toHaveBeenCalledWith('heartbeat', 3, 'ended');
  }));
