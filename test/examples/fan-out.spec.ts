import { main } from '../../examples/fan-out.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

test('the fan-out example runs as written', () =>
  withLogCaptured(async (log) => {
    expect(await main(redis.url)).toBe(245);
    expect(log).toHaveBeenCalledWith(245);
    const results = log.mock.calls.map((c) => c[0] as unknown).find((v) => typeof v === 'object' && v !== null) as Record<string, number>;
    expect(Object.entries(results).map(([id, n]) => `${id.split(':').pop()}=${n}`).sort()).toEqual(['east=45', 'north=120', 'south=80']);
  }));
