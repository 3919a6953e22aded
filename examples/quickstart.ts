// The README's engine quick start, kept compiling and running by test/examples.
import { Queue, Worker, type Job } from 'relq';

interface EmailJob {
  to: string;
  subject: string;
}

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<string | undefined> {
  const emails = new Queue<EmailJob, string>('emails', { connection: redisUrl });

  // Producer: an idempotency key makes a retried request add nothing twice.
  const { id } = await emails.add(
    { to: 'ada@example.com', subject: 'Welcome' },
    { jobId: 'welcome:ada', attempts: 5, backoff: { type: 'exponential', delayMs: 500 } },
  );

  // Consumer: leased, heartbeated, acked with the return value, retried on throw.
  const worker = new Worker(emails, async (job: Job<EmailJob>) => {
    return `sent to ${job.data.to} (attempt ${job.attempt})`;
  }, { concurrency: 10 });

  const result = await emails.waitForResult(id, { timeoutMs: 5000 });
  console.log(result); // "sent to ada@example.com (attempt 1)"

  await worker.close();
  await emails.close();
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
