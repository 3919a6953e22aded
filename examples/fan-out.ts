// A job that fans out as it runs and resumes with its children's results (docs/flows.md,
// "Children added as a job runs"), kept running by test/examples.
import { Queue, Worker, type Job } from 'relq';

type Report = { month: string; step: 'split' | 'join' };
type Region = { region: string };

const SALES: Record<string, number> = { north: 120, south: 80, east: 45 };

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<number> {
  // one {tag}: both queues on one Cluster slot, so a parent and its children share scripts
  const reports = new Queue<Report, number>('{reports}-monthly', { connection: redisUrl });
  const regions = new Queue<Region, number>('{reports}-regions', { connection: redisUrl });

  const reportWorker = new Worker(reports, async (job: Job<Report>) => {
    if (job.data.step === 'split') {
      // known only now: the parts of this month's report
      const names = Object.keys(SALES);
      // ids derived from the parent's: a run again after a crash adds none twice
      await job.addChildren(names.map((region) => ({ data: { region }, queue: regions.name, opts: { jobId: `${job.id}:${region}` } })));
      await job.updateData({ ...job.data, step: 'join' });
      await job.waitForChildren();
      return 0; // dropped: the attempt ended with the wait
    }
    const totals = await job.childrenResults<number>();
    return Object.values(totals).reduce((a, b) => a + b, 0);
  });
  const regionWorker = new Worker(regions, async (job: Job<Region>) => SALES[job.data.region] ?? 0, { concurrency: 3 });

  const { id } = await reports.add({ month: '2026-10', step: 'split' });
  const total = (await reports.waitForResult(id, { timeoutMs: 10_000 }))!;
  console.log(total); // 245
  console.log((await reports.getJob(id))?.children?.results); // { '<id>:north': 120, ... }

  await reportWorker.close();
  await regionWorker.close();
  await reports.close();
  await regions.close();
  return total;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
