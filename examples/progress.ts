// Progress and log lines from a handler (docs/handlers.md), kept running by test/examples.
import { Queue, Worker, type Job } from 'relq';

interface ImportJob {
  file: string;
  rows: number;
}

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<string[]> {
  const imports = new Queue<ImportJob, number>('imports', { connection: redisUrl, maxLogLines: 50 });
  const seen: string[] = [];
  // Any process can follow a job: events carry each progress report and line.
  const following = imports.events().subscribe((e) => {
    if (e.type === 'progress') seen.push(`progress ${JSON.stringify(e.progress)}`);
    if (e.type === 'log') seen.push(`log ${e.line}`);
  });

  const worker = new Worker(imports, async (job: Job<ImportJob>) => {
    for (let done = 0; done < job.data.rows; done += 500) {
      // ... import rows [done, done + 500) ...
      await job.updateProgress({ done: done + 500, of: job.data.rows });
    }
    await job.log(`imported ${job.data.rows} rows from ${job.data.file}`);
    return job.data.rows;
  });

  const { id } = await imports.add({ file: 'customers.csv', rows: 1000 });
  await imports.waitForResult(id, { timeoutMs: 5000 });
  const job = await imports.getJob(id);
  console.log(job?.progress, job?.logs); // { done: 1000, of: 1000 } [ 'imported 1000 rows from customers.csv' ]

  following.unsubscribe();
  await worker.close();
  await imports.close();
  return [...(job?.logs ?? []), ...seen];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
