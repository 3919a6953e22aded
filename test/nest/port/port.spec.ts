/**
 * The NestJS docs' Queues example (an `audio` queue, a WorkerHost consumer switching on
 * job.name, a worker event listener and a queue events listener), ported to relq and run
 * against real Redis: jobs added by name are processed, worker and queue events arrive.
 */
import { QueueModule, QueueRegistry } from '../../../lib/nest/index.js';
import { uniquePrefix } from '../../support/redis.js';
import { useApps, waitFor } from '../app-bed.js';
import { AudioLog } from './audio-log.js';
import { AudioModule } from './audio.module.js';
import { AudioService } from './audio.service.js';

const bed = useApps();

test('jobs added by name are processed by the switch, with worker and queue events', async () => {
  const app = await bed.start(
    QueueModule.forRoot({ connection: bed.redis.url, prefix: uniquePrefix(), defaults: { processor: { blockMs: 200 } }, shutdown: { drainTimeoutMs: 200 } }),
    AudioModule,
  );
  const audio = app.get(AudioService);
  const log = app.get(AudioLog);
  const queue = app.get(QueueRegistry).getQueue('audio');

  const transcode = await audio.transcode('song');
  const concat = await audio.concatenate(['a', 'b']);
  expect(await queue.waitForResult(transcode, { timeoutMs: 5000 })).toEqual({ file: 'song.mp3', steps: 4 });
  expect(await queue.waitForResult(concat, { timeoutMs: 5000 })).toEqual({ file: 'a+b' });

  await waitFor(() => log.lines.filter((l) => l.includes('completed with')).length === 2, 5000, 'both completed queue events');
  const of = (id: string) => log.lines.filter((l) => l.split(' ').includes(id));
  expect(of(transcode)).toEqual(
    expect.arrayContaining([
      `worker: processing job ${transcode} of type transcode with data {"file":"song"}`,
      `worker: job ${transcode} at 25`,
      `worker: job ${transcode} at 100`,
      `queue: processing job ${transcode}`,
      `queue: job ${transcode} completed with {"file":"song.mp3","steps":4}`,
    ]),
  );
  expect(of(transcode).filter((l) => l.startsWith('worker: job'))).toEqual([25, 50, 75, 100].map((p) => `worker: job ${transcode} at ${p}`));
  expect(of(concat)).toEqual(
    expect.arrayContaining([
      `worker: processing job ${concat} of type concatenate with data {"files":["a","b"]}`,
      `queue: processing job ${concat}`,
      `queue: job ${concat} completed with {"file":"a+b"}`,
    ]),
  );
});
