// Step jobs and cancellation (docs/handlers.md, "Step jobs"; docs/bounded-fair-batch.md,
// "Cancelling"), kept running by test/examples.
import { CancelledError, Queue, Worker, type Job } from 'relq';

interface Export {
  report: string;
  /** The step reached, saved in the job's data before it continues later. */
  step?: number;
}

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<{ exported: string; cancelled: string }> {
  const exports = new Queue<Export, string>('exports', { connection: redisUrl });
  let aborted = '';

  const worker = new Worker(
    exports,
    async (job: Job<Export>) => {
      if (job.data.report === 'forever') {
        // a long job that listens to its signal: queue.cancel(id) from any process aborts it
        await new Promise((resolve) => job.signal.addEventListener('abort', resolve, { once: true }));
        if (job.signal.reason instanceof CancelledError) aborted = job.signal.reason.message;
        return 'never stored';
      }
      const step = job.data.step ?? 1;
      if (step < 3) {
        // ... the work of this step ...
        await job.updateData({ ...job.data, step: step + 1 }); // a crash after this resumes at step + 1
        await job.snooze(10); // continue later, without using an attempt
        return 'dropped: the job moved to delayed';
      }
      return `${job.data.report} exported in ${step} steps`;
    },
    { concurrency: 2 },
  );

  const { id } = await exports.add({ report: 'q3' });
  const exported = (await exports.waitForResult(id, { timeoutMs: 10_000 }))!;
  console.log(exported); // q3 exported in 3 steps

  const { id: forever } = await exports.add({ report: 'forever' });
  while ((await exports.getJob(forever))?.state !== 'working') await new Promise((r) => setTimeout(r, 20));
  console.log(await exports.cancel(forever, { reason: 'not needed any more' })); // dead
  while (!aborted) await new Promise((r) => setTimeout(r, 20));
  console.log(aborted); // job <id> was cancelled: not needed any more

  await worker.close();
  await exports.close();
  return { exported, cancelled: aborted };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
