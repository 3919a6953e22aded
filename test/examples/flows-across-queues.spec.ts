import { main } from '../../examples/flows-across-queues.js';
import { useExampleRedis, withLogCaptured } from './example-bed.js';

const redis = useExampleRedis();

test('the flow across queues example runs as written', () =>
  withLogCaptured(async (log) => {
    const out = await main(redis.url);
    expect(out.tree).toEqual(['{shop}-orders waiting-children', '{shop}-email pending', '{shop}-sms pending']);
    expect(out.shipped).toBe('shipped A-17');
    expect(log).toHaveBeenCalledWith('shipped A-17');
  }));
