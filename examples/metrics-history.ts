// A queue's metrics history kept in Redis (docs/observability.md), kept running by test/examples.
import { Queue, Worker, type Job } from 'relq';

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<{ completed: number; dead: number; timed: number }> {
  // Kept two hours; the workers' settle calls write it, any process reads it.
  const thumbnails = new Queue<{ ms: number }>('thumbnails', { connection: redisUrl, metrics: { keepMinutes: 120 }, defaults: { attempts: 1 } });
  const worker = new Worker(thumbnails, async (job: Job<{ ms: number }>) => {
    if (job.data.ms < 0) throw new Error('corrupt image');
    await new Promise((r) => setTimeout(r, job.data.ms)); // ... resize ...
  });
  await thumbnails.addBulk([20, 20, 20, 80, -1].map((ms) => ({ data: { ms } })));

  // Another process (a dashboard, `relq metrics thumbnails`) reads the same history.
  const reader = new Queue('thumbnails', { connection: redisUrl });
  let history = await reader.getMetrics();
  while (history.total.completed + history.total.dead < 5) {
    await new Promise((r) => setTimeout(r, 50));
    history = await reader.getMetrics(); // the last hour, one point per minute
  }
  const { completed, dead, runTime } = history.total;
  console.log(`completed ${completed}, dead ${dead}, run time p50 ${runTime.p50} ms, p99 ${runTime.p99} ms`);

  await worker.close();
  await Promise.all([thumbnails.close(), reader.close()]);
  return { completed, dead, timed: runTime.count };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
