// Deduplication ids and retention by count (README, "Deduplication"; docs/bounded-fair-batch.md,
// "Retention of finished jobs"), kept running by test/examples.
import { Queue, Worker } from 'relq';

interface Reindex {
  user: string;
  fields: string[];
}

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<{ ran: string[][]; outcomes: string[]; kept: number }> {
  // only the newest 2 completed jobs are kept (and each for at most a day)
  const reindex = new Queue<Reindex, string>('reindex', {
    connection: redisUrl,
    defaults: { keepCompleted: { count: 2, ageMs: 86_400_000 } },
  });

  // debounce: a burst of edits of one user makes one job, with the last edit's data, run
  // 200 ms after the last of them
  const outcomes: string[] = [];
  for (const fields of [['name'], ['name', 'email'], ['email']]) {
    const r = await reindex.add({ user: 'u1', fields }, { delayMs: 200, deduplication: { id: 'user:u1', mode: 'debounce' } });
    outcomes.push(r.deduplicated ?? 'created');
  }
  console.log(outcomes); // [ 'created', 'replaced', 'replaced' ]
  console.log(await reindex.getDeduplicationJobId('user:u1')); // the one job's id

  const ran: string[][] = [];
  const worker = new Worker(reindex, async (job) => {
    ran.push(job.data.fields);
    return `reindexed ${job.data.user}`;
  });
  const id = (await reindex.getDeduplicationJobId('user:u1'))!;
  await reindex.waitForResult(id, { timeoutMs: 5000 });
  const burst = [...ran];
  console.log(burst); // [ [ 'email' ] ]: one run, with the last edit's data

  // four more jobs complete; the count keeps the newest two
  for (const user of ['u2', 'u3', 'u4', 'u5']) {
    const { id: other } = await reindex.add({ user, fields: ['name'] });
    await reindex.waitForResult(other, { timeoutMs: 5000 });
  }
  const kept = (await reindex.counts()).completed;
  console.log(kept); // 2

  await worker.close();
  await reindex.close();
  return { ran: burst, outcomes, kept };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
