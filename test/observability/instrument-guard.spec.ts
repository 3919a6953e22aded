/**
 * An instrument that throws never breaks a job (lib/core/instrumentation/observe.ts): whatever
 * its `run` does, the handler runs exactly once, its outcome is the job's, and the
 * instrument's failure is a process warning. Real Worker, private redis-server.
 */
import { jest } from '@jest/globals';
import { Worker, type Job } from '../../lib/index.js';
import { registerInstrument, type JobOutcome, type ProcessScope } from '../../lib/core/instrumentation/index.js';
import { useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Registers an instrument whose process scope runs handlers with `run`; collects outcomes and warnings. */
function instrument(run: ProcessScope['run']): { outcomes: string[]; warnings: string[] } {
  const seen = { outcomes: [] as string[], warnings: [] as string[] };
  // the warnings relq emits, kept from Node's output (other warnings pass through)
  const emit = process.emitWarning.bind(process);
  const spy = jest.spyOn(process, 'emitWarning').mockImplementation(((warning: string | Error, options?: { code?: string }) => {
    if (options?.code === 'RELQ_INSTRUMENTATION') seen.warnings.push(String(warning));
    else emit(warning, options as never);
  }) as typeof process.emitWarning);
  const unregister = registerInstrument({
    process: () => ({ run, end: (outcomes: readonly JobOutcome[]) => seen.outcomes.push(...outcomes.map((o) => o.kind)) }),
  });
  cleanups.push(() => {
    unregister();
    spy.mockRestore();
  });
  return seen;
}

let n = 0;

/** One job through a real Worker; what its handler saw and how the job ended. */
async function runOne(handler: (job: Job<string>) => Promise<string>): Promise<{ runs: number; ended: { type: string; result?: unknown; error?: unknown } }> {
  const q = res.queue<string, string>(`guard-${process.pid}-${++n}`, { defaults: { attempts: 1 } });
  let runs = 0;
  let ended: { type: string; result?: unknown; error?: unknown } | undefined;
  const w = res.worker(
    new Worker<string, string>(q, (job) => {
      runs += 1;
      return handler(job);
    }),
  );
  w.events.subscribe((e) => {
    if (e.type === 'completed' || e.type === 'dead') ended = e as typeof ended;
  });
  await q.add('x');
  await waitUntil(() => ended !== undefined, 'the job to end', 10_000);
  return { runs, ended: ended! };
}

const BROKEN: Array<[string, ProcessScope['run'], number]> = [
  // [what the instrument does, its run, warnings expected]
  ['throws before running the handler', () => {
    throw new Error('instrument broke before');
  }, 1],
  ['throws after the handler ran', (handler) => {
    handler();
    throw new Error('instrument broke after');
  }, 1],
  ['never runs the handler', (() => undefined) as ProcessScope['run'], 1],
  ['runs the handler twice', (handler) => {
    handler();
    return handler();
  }, 0],
];

test.each(BROKEN)('an instrument whose run %s: the handler runs once and the job completes with its result', async (_what, run, warnings) => {
  const seen = instrument(run);
  const { runs, ended } = await runOne(async (job) => `done ${job.data}`);
  expect(runs).toBe(1);
  expect(ended).toMatchObject({ type: 'completed', result: 'done x' });
  expect(seen.outcomes).toEqual(['completed']);
  expect(seen.warnings).toHaveLength(warnings);
  if (warnings) expect(seen.warnings[0]).toMatch(/^relq instrumentation failed in process: /);
});

test("the handler's own failure stays the job's outcome, even when the instrument throws another error over it", async () => {
  const seen = instrument((handler) => {
    try {
      return handler();
    } catch {
      throw new Error('instrument replaced it');
    }
  });
  const { runs, ended } = await runOne(() => {
    throw new Error('handler failed'); // a synchronous throw, through the instrument's run
  });
  expect(runs).toBe(1);
  expect(ended.type).toBe('dead');
  expect(String((ended.error as Error).message ?? ended.error)).toContain('handler failed');
  expect(seen.outcomes).toEqual(['dead']);
  expect(seen.warnings).toHaveLength(1);
  expect(seen.warnings[0]).toContain('instrument replaced it');
});

test('an instrument that runs the handler as it should changes nothing and warns of nothing', async () => {
  const seen = instrument((handler) => handler());
  const { runs, ended } = await runOne(async () => 'ok');
  expect([runs, ended.type, ended.result]).toEqual([1, 'completed', 'ok']);
  expect(seen.outcomes).toEqual(['completed']);
  expect(seen.warnings).toEqual([]);
});
