// Parent/child flows (docs/flows.md), kept running by test/examples.
import { Queue, Worker, type Job } from 'relq';

type Step = { kind: 'resize'; size: number } | { kind: 'zip' } | { kind: 'publish' };

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<string> {
  const media = new Queue<Step, string>('media', { connection: redisUrl });

  // publish <- zip <- three resizes: added atomically, all or nothing.
  const flow = await media.addFlow({
    data: { kind: 'publish' },
    children: [
      {
        data: { kind: 'zip' },
        children: [320, 640, 1280].map((size) => ({ data: { kind: 'resize', size } as Step, opts: { attempts: 3 } })),
      },
    ],
  });
  console.log((await media.getJob(flow.id))?.state); // 'waiting-children'

  // One worker, one handler per kind of step; a parent runs only once its children completed.
  const worker = new Worker(media, async (job: Job<Step>) => {
    switch (job.data.kind) {
      case 'resize':
        return `photo-${job.data.size}.jpg`;
      case 'zip': {
        const files = await job.childrenResults<string>(); // child id -> what its handler returned
        return `album.zip (${Object.values(files).sort().join(', ')})`;
      }
      case 'publish':
        return `published ${Object.values(await job.childrenResults<string>())[0]}`;
    }
  });

  const published = (await media.waitForResult(flow.id, { timeoutMs: 5000 }))!;
  console.log(published); // published album.zip (photo-1280.jpg, photo-320.jpg, photo-640.jpg)

  await worker.close();
  await media.deleteQueue();
  await media.close();
  return published;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
