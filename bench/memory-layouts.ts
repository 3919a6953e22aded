/**
 * Redis memory per 10,000 waiting jobs in candidate storage layouts, with the bench's
 * payload and relq's record and id shapes, written directly (no scripts): what the
 * memory target would take. Development aid: after any `npm run bench`, run
 * `node .bench-tmp/bench/memory-layouts.js`.
 */
import { Redis, type ChainableCommander } from 'ioredis';
import { makePayload } from './payload.js';
import { startRedis } from './redis-server.js';
import { usedMemory } from './stats.js';

const N = 10_000;
const record = (i: number): string => `{"t":${1763900000000 + i},"a":3}\n${JSON.stringify(makePayload(i))}`;
const jobId = (i: number): string => `mi9x2k3${String(i).padStart(9, '0')}`; // 16 characters, as relq's
const entryId = (i: number): string => `${1763900000000 + Math.floor(i / 10)}-${i % 10}`;
const SEP = '\x1e';

const LAYOUTS: Record<string, (p: ChainableCommander, i: number) => void> = {
  'hash id -> record, list of ids (relq)': (p, i) => p.hset('jobs', jobId(i), record(i)).rpush('pending', jobId(i)),
  'list of records': (p, i) => p.rpush('pending', `${jobId(i)}${SEP}${record(i)}`),
  'list of records + hash id -> ""': (p, i) => p.rpush('pending', `${jobId(i)}${SEP}${record(i)}`).hset('jobs', jobId(i), ''),
  'stream of records (entry id = job id)': (p, i) => p.xadd('pending', entryId(i), 'r', record(i)),
  'stream of records + hash id -> entry id': (p, i) =>
    p.xadd('pending', entryId(i), 'i', jobId(i), 'r', record(i)).hset('jobs', jobId(i), entryId(i)),
};

async function main(): Promise<void> {
  const server = await startRedis();
  const r = new Redis({ host: server.host, port: server.port });
  try {
    for (const [name, add] of Object.entries(LAYOUTS)) {
      await r.flushall();
      const warm = r.pipeline();
      add(warm, -10); // the keys exist before measuring, as after a queue's first job
      await warm.exec();
      const before = await usedMemory(r);
      for (let i = 0; i < N; i += 500) {
        const p = r.pipeline();
        for (let k = i; k < i + 500; k++) add(p, k);
        await p.exec();
      }
      const bytes = (await usedMemory(r)) - before;
      console.log(`${name}: ${(bytes / 1048576).toFixed(2)} MiB per ${N.toLocaleString('en')} (${Math.round(bytes / N)} B/job)`);
    }
  } finally {
    r.disconnect();
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
