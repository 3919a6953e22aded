/**
 * `npm run chaos [-- --duration 60 --workers 3 --jobs 9000 --concurrency 4 --lease-ms 3000]`:
 * the long chaos run (test/chaos/chaos.ts), with its progress printed while it runs. Exits 1
 * when the audit fails.
 *
 * `npm run chaos -- --durability [--rounds 3]`: instead, measures what a kill -9 of
 * redis-server loses of confirmed adds and acks under `appendfsync always`, `everysec` and no
 * persistence (test/support/kill-mid-stream.ts), and prints the table docs/reliability.md quotes.
 */
import { parseArgs } from 'node:util';
import { killMidStream } from '../support/kill-mid-stream.js';
import { startRedis } from '../support/redis.js';
import { runChaos } from './chaos.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '60' },
    workers: { type: 'string', default: '3' },
    jobs: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    'lease-ms': { type: 'string', default: '3000' },
    durability: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '3' },
  },
});
const number = (name: string, v: string | undefined, min: number): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) {
    console.error(`chaos: --${name} must be a whole number of at least ${min}, got ${v}`);
    process.exit(2);
  }
  return n;
};
if (values.durability) {
  // The test servers are unref'd child processes: waiting for one to exit keeps nothing alive.
  setInterval(() => undefined, 1000);
  const rounds = number('rounds', values.rounds, 1);
  console.log('| persistence | confirmed adds | lost adds | confirmed acks | lost acks |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const appendfsync of ['always', 'everysec', undefined] as const) {
    for (let i = 0; i < rounds; i++) {
      const redis = await startRedis(appendfsync ? { appendfsync } : { controllable: true });
      try {
        const r = await killMidStream(redis, { addsBefore: 2000 });
        const mode = appendfsync ? `AOF, appendfsync ${appendfsync}` : 'none';
        console.log(`| ${mode} | ${r.confirmedAdds} | ${r.lostAdds.length} | ${r.confirmedAcks} | ${r.lostAcks.length} |`);
      } finally {
        await redis.stop();
      }
    }
  }
  process.exit(0);
}

const durationS = number('duration', values.duration, 20);
const report = await runChaos({
  durationMs: durationS * 1000,
  workers: number('workers', values.workers, 1),
  jobs: number('jobs', values.jobs ?? String(durationS * 150), 100),
  concurrency: number('concurrency', values.concurrency, 1),
  leaseMs: number('lease-ms', values['lease-ms'], 500),
  log: (line) => console.log(line),
});
process.exit(report.pass ? 0 : 1);
