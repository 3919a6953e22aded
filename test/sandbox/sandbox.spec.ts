/**
 * Sandboxed handlers: a Worker given a handler file runs its jobs in worker threads or child
 * processes. A child that exits, throws outside its handler, runs out of memory or blocks
 * fails its attempt (retried by the job's policy) and is replaced, while the worker goes on;
 * the job's calls, its signal, its result and typed errors cross the boundary; the children
 * are bounded by the concurrency and reused.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CancelledError,
  SandboxError,
  TimeoutError,
  UnrecoverableError,
  ValidationError,
  Worker,
  type SandboxOptions,
  type WorkerEvent,
} from '../../lib/index.js';
import { buildEngine, type BuiltEngine } from '../support/engine-child.js';
import { useRedis, waitUntil } from '../support/engine-harness.js';

const HANDLER = pathToFileURL(join(process.cwd(), 'test', 'sandbox', 'fixtures', 'handler.mjs'));
const KINDS = ['thread', 'process'] as const;
type Kind = (typeof KINDS)[number];

const res = useRedis();
let engine: BuiltEngine | undefined;
let tmp = '';

beforeAll(() => {
  engine = buildEngine(); // the handler file's relq
  tmp = mkdtempSync(join(tmpdir(), 'relq-sandbox-'));
});
afterAll(() => {
  engine?.remove();
  rmSync(tmp, { recursive: true, force: true });
});

interface Echo {
  pid: number;
  threadId: number;
  id: string;
  data: unknown;
  attempt: number;
  maxAttempts: number;
}

function sandboxed(kind: Kind, opts: { concurrency?: number; leaseMs?: number; sandbox?: SandboxOptions } = {}) {
  const q = res.queue<any, any>();
  const events: Array<WorkerEvent<any, any>> = [];
  const w = res.worker(new Worker<any, any>(q, HANDLER, { concurrency: opts.concurrency ?? 2, leaseMs: opts.leaseMs, sandbox: { kind, ...opts.sandbox } }));
  w.events.subscribe((e) => events.push(e));
  return { q, w, events };
}

/** Where an echo ran: a process's pid, or a thread's id. */
const childOf = (kind: Kind, e: Echo): number => (kind === 'thread' ? e.threadId : e.pid);

describe.each(KINDS)('%s children', (kind) => {
  test('a handler that exits fails its attempt; the worker completes the next jobs in a new child', async () => {
    const { q, events } = sandboxed(kind);
    const { id: crashed } = await q.add(null, { name: 'exit', attempts: 1 });
    await waitUntil(() => events.some((e) => e.type === 'dead'), 'the crashed job dead', 15_000);
    const dead = events.find((e) => e.type === 'dead') as Extract<WorkerEvent<any, any>, { type: 'dead' }>;
    expect(dead.error).toBeInstanceOf(SandboxError);
    expect(String((dead.error as Error).message)).toMatch(/exited with code 3/);
    expect(await q.getJob(crashed)).toMatchObject({ state: 'dead' });
    const added = await q.addBulk(Array.from({ length: 4 }, (_, i) => ({ data: i, opts: { name: 'echo' } })));
    for (const { id } of added) expect(await q.waitForResult(id, { timeoutMs: 15_000 })).toMatchObject({ id });
  }, 40_000);

  test('a handler that throws outside its promise fails its attempt with that error as the cause', async () => {
    const { q, events } = sandboxed(kind);
    const { id } = await q.add(null, { name: 'throw-outside', attempts: 1 });
    await waitUntil(() => events.some((e) => e.type === 'dead'), 'the job dead', 15_000);
    const { error } = events.find((e) => e.type === 'dead') as { error: SandboxError };
    expect(error).toBeInstanceOf(SandboxError);
    expect(error.jobId).toBe(id);
    expect((error.cause as Error).message).toBe('thrown outside the handler');
    const next = await q.add(1, { name: 'echo' });
    expect(await q.waitForResult(next.id, { timeoutMs: 15_000 })).toMatchObject({ data: 1 });
  }, 40_000);

  test('a handler that runs out of memory fails its attempt; the worker goes on', async () => {
    const { q, events } = sandboxed(kind, { sandbox: { maxMemoryMb: 32 } });
    await q.add(null, { name: 'oom', attempts: 1 });
    await waitUntil(() => events.some((e) => e.type === 'dead'), 'the job dead', 30_000);
    const { error } = events.find((e) => e.type === 'dead') as { error: SandboxError };
    expect(error).toBeInstanceOf(SandboxError);
    expect(error.message).toMatch(kind === 'thread' ? /ran out of memory/ : /SIGABRT|SIGTRAP|out of memory/);
    const next = await q.add(2, { name: 'echo' });
    expect(await q.waitForResult(next.id, { timeoutMs: 15_000 })).toMatchObject({ data: 2 });
  }, 60_000);

  test('a blocked child is killed at timeoutMs; the job is retried and completes, the worker lives', async () => {
    // one child: the retry and the next job run only once the blocked one is replaced
    const { q, events } = sandboxed(kind, { concurrency: 1, sandbox: { killAfterMs: 100 } });
    const { id } = await q.add(null, { name: 'spin', timeoutMs: 2000, attempts: 2, backoff: 0 });
    expect(await q.waitForResult(id, { timeoutMs: 20_000 })).toBe('attempt 2');
    const failed = events.find((e) => e.type === 'failed') as { error: unknown };
    expect(failed.error).toBeInstanceOf(TimeoutError);
    const next = await q.add(3, { name: 'echo' });
    expect(await q.waitForResult(next.id, { timeoutMs: 15_000 })).toMatchObject({ data: 3 });
  }, 40_000);

  test('progress, log lines, new data, job fields and the result cross the boundary', async () => {
    const { q } = sandboxed(kind);
    const { id } = await q.add({ step: 1 }, { name: 'talk' });
    expect(await q.waitForResult(id, { timeoutMs: 15_000 })).toEqual({ written: true, data: { step: 2 } });
    expect(await q.getJob(id)).toMatchObject({ progress: { done: 1, of: 2 }, logs: [`hello from ${id}`], data: { step: 2 } });
    const echo = await q.add({ deep: [1, 'two'] }, { name: 'echo', attempts: 4 });
    expect(await q.waitForResult(echo.id, { timeoutMs: 15_000 })).toMatchObject({ id: echo.id, data: { deep: [1, 'two'] }, attempt: 1, maxAttempts: 4 });
  }, 40_000);

  test('typed errors keep their meaning: UnrecoverableError dead at once, RateLimitError a rate limit, others their name, fields and cause', async () => {
    const { q, events } = sandboxed(kind);
    const fatal = await q.add({ engine: engine!.dir }, { name: 'unrecoverable', attempts: 3 });
    const rejected = await q.add(null, { name: 'reject', attempts: 3 });
    const custom = await q.add(null, { name: 'custom', attempts: 1 });
    const limited = await q.add({ marker: join(tmp, `${kind}-limited`) }, { name: 'rate-limit', attempts: 1 });
    expect(await q.waitForResult(limited.id, { timeoutMs: 15_000 })).toBe('after the limit');
    await waitUntil(() => events.filter((e) => e.type === 'dead').length === 3, 'three dead', 15_000);
    const deadOf = (id: string) => (events.find((e) => e.type === 'dead' && e.job.id === id) as { error: any }).error;
    expect(deadOf(fatal.id)).toBeInstanceOf(UnrecoverableError);
    expect(deadOf(fatal.id).message).toBe('card declined for good');
    expect(deadOf(rejected.id)).toBeInstanceOf(UnrecoverableError);
    expect(await q.getJob(fatal.id)).toMatchObject({ state: 'dead', failures: 1 });
    expect(await q.getJob(rejected.id)).toMatchObject({ state: 'dead', failures: 1 });
    const error = deadOf(custom.id);
    expect(error).toMatchObject({ name: 'PaymentError', message: 'payment failed', code: 'E_PAYMENT', amount: 42 });
    expect(error.stack).toMatch(/handler\.mjs/);
    expect(error.cause).toMatchObject({ message: 'gateway said no' });
    expect(events).toContainEqual(expect.objectContaining({ type: 'rateLimited', delayMs: 200 }));
    expect(await q.getJob(limited.id)).toMatchObject({ state: 'completed' });
  }, 40_000);

  test('a result that does not clone fails the attempt', async () => {
    const { q, events } = sandboxed(kind);
    await q.add(null, { name: 'uncloneable', attempts: 1 });
    await waitUntil(() => events.some((e) => e.type === 'dead'), 'the job dead', 15_000);
    expect((events.find((e) => e.type === 'dead') as { error: Error }).error.message).toMatch(/could not be cloned/);
  }, 40_000);

  test('cancel(): the child hears the abort (CancelledError), and a child that ignores it is killed', async () => {
    const { q, events } = sandboxed(kind, { sandbox: { killAfterMs: 200 } });
    const marker = join(tmp, `${kind}-cancelled.json`);
    const honours = await q.add({ marker }, { name: 'wait-abort' });
    const ignores = await q.add(null, { name: 'ignore-abort' });
    await waitUntil(async () => (await q.getJob(honours.id))?.logs?.length === 1 && (await q.getJob(ignores.id))?.logs?.length === 1, 'both running', 15_000);
    const pid = Number((await q.getJob(ignores.id))!.logs![0]!.split(' ')[1]);
    await q.cancel(honours.id, { reason: 'not needed' });
    await q.cancel(ignores.id);
    await waitUntil(() => existsSync(marker), 'the honouring handler aborted', 10_000);
    expect(JSON.parse(readFileSync(marker, 'utf8'))).toEqual({ name: 'CancelledError', message: `job ${honours.id} was cancelled: not needed` });
    await waitUntil(() => events.filter((e) => e.type === 'cancelled').length === 2, 'both reported cancelled', 10_000);
    expect((events.find((e) => e.type === 'cancelled') as { error: unknown }).error).toBeInstanceOf(CancelledError);
    if (kind === 'process') await waitUntil(() => !alive(pid), `the ignoring child (pid ${pid}) killed`, 10_000);
    // both slots free: two jobs at once run again
    const next = await q.addBulk([{ data: { ms: 300 }, opts: { name: 'busy' } }, { data: { ms: 300 }, opts: { name: 'busy' } }]);
    for (const { id } of next) expect(await q.waitForResult(id, { timeoutMs: 15_000 })).toBe('done');
  }, 40_000);
});

test('children never outnumber the concurrency, are reused, and retire when idle', async () => {
  const { q } = sandboxed('process', { concurrency: 3, sandbox: { idleMs: 300 } });
  const most = sampleChildren();
  const added = await q.addBulk(Array.from({ length: 30 }, (_, i) => ({ data: { ms: 50, i }, opts: { name: i % 3 === 0 ? 'busy' : 'echo' } })));
  const pids = new Set<number>();
  for (const { id } of added) {
    const r = (await q.waitForResult(id, { timeoutMs: 20_000 })) as Echo | 'done';
    if (r !== 'done') pids.add(childOf('process', r));
  }
  expect(pids.size).toBeGreaterThanOrEqual(1);
  expect(pids.size).toBeLessThanOrEqual(3);
  most.stop();
  expect(most.value).toBeGreaterThanOrEqual(1);
  expect(most.value).toBeLessThanOrEqual(3);
  await waitUntil(() => [...pids].every((pid) => !alive(pid)), 'idle children retired', 10_000);
  const again = await q.add(null, { name: 'echo' });
  const r = (await q.waitForResult(again.id, { timeoutMs: 15_000 })) as Echo;
  expect(pids.has(r.pid)).toBe(false);
}, 60_000);

test('a child that ignores its abort keeps its place until killed: jobs wait, the children never outnumber the concurrency', async () => {
  const { q, events } = sandboxed('process', { concurrency: 2, sandbox: { killAfterMs: 1500 } });
  const most = sampleChildren();
  try {
    const stuck = await q.addBulk([{ data: null, opts: { name: 'ignore-abort' } }, { data: null, opts: { name: 'ignore-abort' } }]);
    await waitUntil(async () => {
      const jobs = await Promise.all(stuck.map(({ id }) => q.getJob(id)));
      return jobs.every((j) => j?.logs?.length === 1);
    }, 'both running', 15_000);
    for (const { id } of stuck) await q.cancel(id);
    await waitUntil(() => events.filter((e) => e.type === 'cancelled').length === 2, 'both cancelled', 10_000);
    // two free slots, two busy children: the next jobs wait for the kills
    const next = await q.addBulk(Array.from({ length: 4 }, (_, i) => ({ data: i, opts: { name: 'echo' } })));
    for (const { id } of next) expect(await q.waitForResult(id, { timeoutMs: 15_000 })).toMatchObject({ id });
  } finally {
    most.stop();
  }
  expect(most.value).toBe(2);
}, 40_000);

test('threads too are bounded by the concurrency and reused', async () => {
  const { q } = sandboxed('thread', { concurrency: 2 });
  const added = await q.addBulk(Array.from({ length: 20 }, (_, i) => ({ data: i, opts: { name: 'echo' } })));
  const threads = new Set<number>();
  for (const { id } of added) threads.add(childOf('thread', (await q.waitForResult(id, { timeoutMs: 15_000 })) as Echo));
  expect(threads.size).toBeLessThanOrEqual(2);
}, 40_000);

test('a child busy past its lease keeps it: the worker heartbeats for it', async () => {
  const { q, events } = sandboxed('thread', { leaseMs: 200 });
  const { id } = await q.add({ ms: 1500 }, { name: 'busy' });
  expect(await q.waitForResult(id, { timeoutMs: 15_000 })).toBe('done');
  expect(events.some((e) => e.type === 'lost')).toBe(false);
  expect(await q.getJob(id)).toMatchObject({ state: 'completed', dequeues: 1 });
}, 30_000);

test('a module without a handler fails each attempt with a SandboxError naming the file', async () => {
  const q = res.queue<null, unknown>();
  const w = res.worker(new Worker(q, join(process.cwd(), 'test', 'sandbox', 'fixtures', 'not-a-handler.mjs')));
  const dead: unknown[] = [];
  w.events.subscribe((e) => e.type === 'dead' && dead.push(e.error));
  await q.add(null, { attempts: 1 });
  await waitUntil(() => dead.length === 1, 'the job dead', 15_000);
  expect(dead[0]).toBeInstanceOf(SandboxError);
  expect((dead[0] as Error).message).toMatch(/not-a-handler\.mjs exports no handler function/);
}, 30_000);

test('bad handler files and sandbox options are refused before anything runs', () => {
  const q = res.queue();
  const make = (handler: unknown, sandbox?: unknown) => () =>
    new Worker(q, handler as string, { autostart: false, ...(sandbox !== undefined && { sandbox: sandbox as SandboxOptions }) });
  expect(make('relative/handler.mjs')).toThrow(ValidationError);
  expect(make('relative/handler.mjs')).toThrow(/absolute path or a file: URL/);
  expect(make(join(tmp, 'missing.mjs'))).toThrow(/names no file/);
  expect(make(new URL('https://example.com/h.js'))).toThrow(/file: URL/);
  expect(make(42)).toThrow(/must be a function, or a handler file/);
  expect(make(HANDLER, { kind: 'fork' })).toThrow(/sandbox.kind: must be 'thread' or 'process'/);
  expect(make(HANDLER, { maxMemoryMb: 0 })).toThrow(/sandbox.maxMemoryMb/);
  expect(make(HANDLER, { threads: 2 })).toThrow(/unknown option 'threads'/);
  expect(() => new Worker(q, async () => 1, { autostart: false, sandbox: {} })).toThrow(/sandbox: applies to a handler file/);
});

/** Samples this process's sandbox children (Linux /proc) every 10 ms: the most seen at once. */
function sampleChildren(): { readonly value: number; stop(): void } {
  let most = 0;
  const count = (): number => {
    let n = 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').startsWith('relq sandbox')) n++;
      } catch {
        // gone meanwhile
      }
    }
    return n;
  };
  const timer = setInterval(() => (most = Math.max(most, count())), 10);
  timer.unref();
  return {
    get value() {
      return most;
    },
    stop: () => clearInterval(timer),
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
