/**
 * The short chaos run inside `npm test` (the long one is `npm run chaos`): at most a minute of
 * real worker processes, producers and faults on a persistent redis-server, then the audit.
 */
import { runChaos } from './chaos.js';

test('chaos: nothing lost, nothing completed twice, no stale ack accepted, workers resume within 5 s', async () => {
  const lines: string[] = [];
  const report = await runChaos({
    durationMs: 30_000,
    workers: 2,
    jobs: 3000,
    concurrency: 3,
    leaseMs: 2000,
    log: (line) => {
      lines.push(line);
      if (process.env.RELQ_TEST_LOGS) console.log(line);
    },
  });
  console.log(report.summary);
  expect({ failures: report.failures, log: report.pass ? [] : lines }).toEqual({ failures: [], log: [] });
  expect(report.jobs).toBeGreaterThan(1000);
  expect(report.faults.workerKills).toBeGreaterThan(5);
}, 120_000);
