// Limits the whole fleet shares (docs/concurrency.md), kept running by test/examples: two
// workers of 5 slots each (as if in two app instances) run at most 2 calls to a fragile
// upstream at once; a premium tenant gets more of its group's slots than the others.
import { Queue, Worker, type Job } from 'relq';

type Call = { tenant: string };

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<{ most: number; raisedMost: number }> {
  const calls = new Queue<Call>('upstream-calls', { connection: redisUrl, globalConcurrency: 2, groupConcurrency: 1 });
  await calls.setGroupOverride('acme', { concurrency: 2 }); // the premium tenant

  let running = 0;
  let most = 0;
  const handler = async (_job: Job<Call>) => {
    most = Math.max(most, ++running);
    await new Promise((r) => setTimeout(r, 100));
    running -= 1;
  };
  // two workers, as two app instances would run them: 10 slots, 2 calls at once
  const workers = [new Worker(calls, handler, { concurrency: 5 }), new Worker(calls, handler, { concurrency: 5 })];

  const tenants = ['acme', 'acme', 'acme', 'globex', 'globex', 'initech', 'initech', 'acme'];
  await calls.addBulk(tenants.map((tenant) => ({ data: { tenant }, opts: { group: tenant } })));
  while ((await calls.counts()).completed < tenants.length) await new Promise((r) => setTimeout(r, 20));
  const firstMost = most;
  console.log(`at most ${firstMost} calls at once`); // at most 2 calls at once

  // the upstream got more capacity: raise the limit for every worker, nothing restarted
  await calls.setGlobalConcurrency(4);
  most = 0;
  await calls.addBulk(tenants.map((tenant) => ({ data: { tenant }, opts: { group: tenant } })));
  while ((await calls.counts()).completed < 2 * tenants.length) await new Promise((r) => setTimeout(r, 20));
  const raisedMost = most;
  console.log(`then at most ${raisedMost} at once`); // up to 4: acme 2, globex 1, initech 1

  await Promise.all(workers.map((w) => w.close()));
  await calls.deleteQueue();
  await calls.close();
  return { most: firstMost, raisedMost };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
