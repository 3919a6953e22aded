/** The floor: redis-benchmark's PING and EVALSHA rates on the run's server, at 1, 10 and 50 clients. */
import { execFileSync } from 'node:child_process';
import { log } from '../recorder.js';
import type { Scenario, ScenarioContext } from './kit.js';

export const floor: Scenario = {
  name: 'floor',
  when: 'before',
  libs: 'all',
  async run(ctx) {
    const { results } = ctx.rec;
    const sha = (await ctx.admin.script('LOAD', 'return 1')) as string;
    for (const c of [1, 10, 50]) {
      results.floor[`PING c=${c}`] = redisBenchmark(ctx, ['-t', 'ping'], c, 'PING_MBULK');
      results.floor[`EVALSHA c=${c}`] = redisBenchmark(ctx, ['evalsha', sha, '0'], c, 'evalsha');
    }
    log(`redis-benchmark: ${Object.entries(results.floor).map(([k, v]) => `${k} ${Math.round(v)}/s`).join(', ')}`);
  },
};

function redisBenchmark({ cfg, redis }: ScenarioContext, args: string[], c: number, test: string): number {
  const out = execFileSync(
    'redis-benchmark',
    ['-h', redis.host, '-p', String(redis.port), '-n', String(cfg.benchmarkRequests), '-c', String(c), '--csv', ...args],
    { encoding: 'utf8' },
  );
  for (const line of out.split('\n')) {
    const cols = line.split('","').map((s) => s.replace(/"/g, ''));
    if (cols[0]?.toLowerCase().startsWith(test.toLowerCase())) return Number(cols[1]);
  }
  throw new Error(`redis-benchmark: no ${test} line in:\n${out}`);
}
