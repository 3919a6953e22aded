// A handler file run in worker threads (docs/sandbox.md), kept running by test/examples.
import { Queue, Worker } from 'relq';

interface CountJob {
  below: number;
}

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<Array<number | undefined>> {
  const primes = new Queue<CountJob, number>('primes', { connection: redisUrl });

  // The handler is a module of its own: each job runs in one of at most 2 worker threads, so a
  // CPU-bound handler never stalls this process (its heartbeats go on), and one that crashes,
  // runs out of memory or hangs past its timeoutMs fails its attempt, not the worker.
  const worker = new Worker(primes, new URL('./count-primes.mjs', import.meta.url), {
    concurrency: 2,
    sandbox: { kind: 'thread', maxMemoryMb: 64 },
  });

  const jobs = await primes.addBulk([10_000, 20_000, 30_000].map((below) => ({ data: { below }, opts: { timeoutMs: 10_000 } })));
  const counts = await Promise.all(jobs.map(({ id }) => primes.waitForResult(id, { timeoutMs: 10_000 })));
  console.log(counts); // [ 1229, 2262, 3245 ]

  await worker.close(); // ends its threads too
  await primes.close();
  return counts;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
