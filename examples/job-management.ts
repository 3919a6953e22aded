// Job management (docs/bounded-fair-batch.md, "Job management"), kept running by test/examples.
import { JobLeasedError, Queue } from 'relq';

interface Report {
  customer: string;
}

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<{ page: string[]; staleAck: boolean; drained: number }> {
  const reports = new Queue<Report, string>('reports', { connection: redisUrl });

  await reports.add({ customer: 'acme' }, { jobId: 'acme', name: 'monthly' });
  await reports.add({ customer: 'globex' }, { jobId: 'globex', delayMs: 60_000 });
  await reports.add({ customer: 'initech' }, { jobId: 'initech', lifo: true }); // head of the line

  // A page of any state: lease order for pending jobs, order: 'desc' reverses it.
  const page = (await reports.getJobs('pending', { start: 0, end: 9 })).map((j) => j.id);
  console.log(page); // [ 'initech', 'acme' ]

  await reports.changeDelay('globex', 120_000); // due 2 minutes from now instead
  await reports.updateData('globex', { customer: 'globex-eu' }); // the data it will run with
  await reports.promote('globex'); // delayed -> pending now
  await reports.changePriority('globex', 10); // ahead of the others

  const [lease] = await reports.lease(); // globex
  try {
    await reports.remove('globex'); // refused: a worker holds it
  } catch (err) {
    if (!(err instanceof JobLeasedError)) throw err;
    await reports.remove('globex', { force: true }); // its lease ends with it
  }
  const staleAck = await reports.ack(lease!, 'done');
  console.log(staleAck); // false: that lease is stale

  // Housekeeping: finished jobs older than an hour, failed monthly reports back to work.
  await reports.clean('completed', { olderThanMs: 3_600_000, limit: 1000 });
  await reports.retryDead({ name: 'monthly', olderThanMs: 60_000, limit: 100 });
  const drained = await reports.drain(); // every waiting job: initech and acme
  console.log(drained); // 2

  await reports.close();
  return { page, staleAck, drained };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
