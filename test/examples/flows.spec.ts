import { main } from '../../examples/flows.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

test('the flows example runs as written', () =>
  withLogCaptured(async (log) => {
    expect(await main(redis.url)).toBe('published album.zip (photo-1280.jpg, photo-320.jpg, photo-640.jpg)');
    expect(log).toHaveBeenCalledWith('waiting-children');
  }));
