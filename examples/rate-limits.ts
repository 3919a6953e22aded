// Rate limits (docs/rate-limits.md), kept running by test/examples.
import { Queue, Worker, type Job } from 'relq';

interface Mail {
  tenantId: string;
  to: string;
}

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<string[]> {
  // every tenant may send 2 mails per second, all workers together
  const mails = new Queue<Mail, string>('mails', { connection: redisUrl, groupLimiter: { max: 2, durationMs: 1000 } });
  const sent: string[] = [];
  let refusedOnce = false;

  const worker = new Worker(mails, async (job: Job<Mail>) => {
    if (job.data.to === 'busy@example.com' && !refusedOnce) {
      refusedOnce = true;
      job.rateLimit(500); // the provider answered 429: hold back this tenant, no failed attempt
    }
    sent.push(`${job.data.tenantId} -> ${job.data.to}`);
    return 'sent';
  }, { concurrency: 5 });

  const jobs = await mails.addBulk([
    { data: { tenantId: 'acme', to: 'busy@example.com' }, opts: { group: 'acme' } },
    { data: { tenantId: 'acme', to: 'b@example.com' }, opts: { group: 'acme' } },
    { data: { tenantId: 'acme', to: 'c@example.com' }, opts: { group: 'acme' } },
    { data: { tenantId: 'globex', to: 'd@example.com' }, opts: { group: 'globex' } },
  ]);
  for (const { id } of jobs) await mails.waitForResult(id, { timeoutMs: 10_000 });
  console.log(sent);

  await worker.close();
  await mails.close();
  return sent;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
