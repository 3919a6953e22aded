// Per-job timeouts (docs/handlers.md, "Timeouts"), kept running by test/examples.
import { Queue, TimeoutError, Worker, type Job } from 'relq';

interface Fetch {
  url: string;
  slow: boolean;
}

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<string[]> {
  const fetches = new Queue<Fetch, string>('fetches', { connection: redisUrl, defaults: { timeoutMs: 200 } });
  const seen: string[] = [];

  const worker = new Worker(fetches, async (job: Job<Fetch>) => {
    // Pass job.signal on to what the handler waits for: it aborts at the timeout.
    const ms = job.data.slow && job.attempt === 1 ? 10_000 : 10;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      job.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(job.signal.reason);
      });
    });
    return `fetched ${job.data.url} (attempt ${job.attempt})`;
  });
  worker.events.subscribe((e) => {
    if (e.type === 'failed' && e.error instanceof TimeoutError) seen.push(`attempt ${e.job.attempt} timed out, retried: ${e.willRetry}`);
  });

  // attempt 1 runs past the queue's 200 ms and is retried; attempt 2 is quick
  const { id } = await fetches.add({ url: 'https://example.com/slow', slow: true }, { attempts: 2, backoff: 0 });
  seen.push((await fetches.waitForResult(id, { timeoutMs: 10_000 })) ?? 'no result');
  console.log(seen); // [ 'attempt 1 timed out, retried: true', 'fetched https://example.com/slow (attempt 2)' ]

  await worker.close();
  await fetches.close();
  return seen;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
