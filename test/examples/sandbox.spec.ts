import { main } from '../../examples/sandbox.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

test('the sandbox example runs as written', () =>
  withLogCaptured(async (log) => {
    expect(await main(redis.url)).toEqual([1229, 2262, 3245]);
    expect(log).toHaveBeenCalledWith([1229, 2262, 3245]);
  }));
