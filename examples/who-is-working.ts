// Who is working on a queue, from any process: queue.getWorkers() (docs/observability.md),
// kept compiling and running by test/examples.
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, Worker, type WorkerInfo } from 'relq';

/** The live workers once `n` are listed (a worker registers with its first lease call). */
async function listed(queue: Queue, n: number): Promise<WorkerInfo[]> {
  for (const end = Date.now() + 5000; ; await sleep(50)) {
    const workers = await queue.getWorkers();
    if (workers.length === n || Date.now() > end) return workers;
  }
}

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<string[][]> {
  const invoices = new Queue<{ customer: string }>('invoices', { connection: redisUrl });
  const mailer = new Worker(invoices, async () => 'sent', { concurrency: 4, appName: 'mailer' });
  const printer = new Worker(invoices, async () => 'printed', { concurrency: 1, appName: 'printer' });

  const rows = (workers: WorkerInfo[]) => workers.map((w) => `${w.appName} pid ${w.pid}: ${w.running}/${w.concurrency} running`).sort();
  const both = rows(await listed(invoices, 2));
  console.log(both); // [ 'mailer pid 4242: 0/4 running', 'printer pid 4242: 0/1 running' ]

  await printer.close(); // a closed worker leaves the list at once; a killed one after its workerTtlMs
  const one = rows(await invoices.getWorkers());
  console.log(one); // [ 'mailer pid 4242: 0/4 running' ]

  await mailer.close();
  await invoices.close();
  return [both, one];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
