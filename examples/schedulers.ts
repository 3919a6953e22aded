// A job scheduler (docs/schedulers.md): a job every 200 ms, exactly one per slot however many
// processes tick; kept running by test/examples.
import { Queue, SchedulerTicker, Worker, type Job } from 'relq';

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<string[]> {
  const reports = new Queue<{ kind: string }>('reports', { connection: redisUrl });
  // Upserting the same scheduler again (every instance at startup) changes nothing.
  await reports.upsertScheduler('heartbeat', { everyMs: 200, limit: 3 }, { data: { kind: 'heartbeat' }, opts: { name: 'beat', attempts: 2 } });
  await reports.upsertScheduler('nightly', { cron: '0 30 2 * * *', tz: 'Europe/Paris', missed: 'skip' }, { data: { kind: 'nightly' } });

  // Any number of processes may tick: each slot is written by one of them.
  const ticker = new SchedulerTicker(reports);
  ticker.start();

  const seen: string[] = [];
  const worker = new Worker(reports, async (job: Job<{ kind: string }>) => {
    seen.push(job.id); // 'repeat:heartbeat:<slot ms>'
  });
  while (seen.length < 3) await new Promise((r) => setTimeout(r, 50));
  // Its third job was its last (limit 3): the tick at that job's slot ends it, and may come just
  // after the job ran.
  const heartbeatEnded = async () => (await reports.getSchedulers()).some((s) => s.id === 'heartbeat' && s.nextRunAt === null);
  for (const until = Date.now() + 5000; !(await heartbeatEnded()) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));

  for (const s of await reports.getSchedulers()) {
    console.log(s.id, s.made, s.nextRunAt === null ? 'ended' : new Date(s.nextRunAt).toISOString());
  }
  await ticker.stop();
  await worker.close();
  await reports.removeScheduler('nightly');
  await reports.removeScheduler('heartbeat');
  await reports.close();
  return seen;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
