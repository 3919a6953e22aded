/**
 * The relq CLI, built and run as a child process against a private Redis: every command in
 * text and --json, the exit codes, batches of dead letters, watch until SIGINT.
 */
import type { Redis } from 'ioredis';
import { Queue, Worker, type WorkerInfo } from '../../lib/index.js';
import { commandStats, scriptCalls, statsDelta } from '../support/engine-harness.js';
import { uniquePrefix } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';
import type { CliRun } from '../support/cli-harness.js';
import { useCliBed } from './cli-bed.js';

const bed = useCliBed();
const { cli, queue, relq } = bed;


/** The parsed stdout of a --json run that succeeded. */
function json<T = any>(r: CliRun): T {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(r.stdout) as T;
}

/** `n` dead letters in `q`, ids `<tag>0..`, named `tag`, dead in order. */
async function deadLetters(q: Queue, tag: string, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `${tag}${i}`);
  for (const id of ids) await q.add(id, { jobId: id, name: tag, attempts: 1 });
  for (const lease of await q.lease({ count: n })) await q.nack(lease, { error: `${tag} failed` });
  return ids;
}

test('queues: the registered queues of the prefix, as a table and as JSON', async () => {
  const prefix = uniquePrefix();
  expect((await relq(prefix, 'queues')).stdout).toContain(`no queues with prefix '${prefix}'`);
  await queue('emails', prefix).add({ to: 'a' });
  await queue('billing', prefix).add({ amount: 1 });
  const listed = json<Array<{ name: string; firstSeen: number }>>(await relq(prefix, '--json', 'queues'));
  expect(listed.map((q) => q.name)).toEqual(['billing', 'emails']);
  const text = await relq(prefix, 'queues');
  expect(text.code).toBe(0);
  expect(text.stdout.split('\n')[0]).toMatch(/^NAME\s+FIRST SEEN$/);
  expect(text.stdout).toContain(`emails   ${new Date(listed[1]!.firstSeen).toISOString()}`);
}, 30_000);

test('counts and jobs (state, page, order) and job, in JSON and text', async () => {
  const prefix = uniquePrefix();
  const q = queue<string>('work', prefix);
  for (const id of ['a', 'b', 'c', 'd']) await q.add(id, { jobId: id });
  await q.add('later', { jobId: 'later', delayMs: 60_000 });
  const counts = json(await relq(prefix, 'counts', 'work', '--json'));
  expect(counts).toEqual(await q.counts());
  expect((await relq(prefix, 'counts', 'work')).stdout).toMatch(/^pending\s+4$/m);

  const page = json<Array<{ id: string }>>(await relq(prefix, '--json', 'jobs', 'work', '--state', 'pending', '--start', '1', '--end', '2'));
  expect(page.map((j) => j.id)).toEqual(['b', 'c']);
  const desc = json<Array<{ id: string }>>(await relq(prefix, '--json', 'jobs', 'work', '--state', 'pending', '--order', 'desc'));
  expect(desc.map((j) => j.id)).toEqual(['d', 'c', 'b', 'a']);
  // without --end a page is getJobs' default: 100 jobs from --start
  await queue<number>('many', prefix).addBulk(Array.from({ length: 105 }, (_, i) => ({ data: i, opts: { jobId: `m${i}` } })));
  const defaultPage = json<Array<{ id: string }>>(await relq(prefix, '--json', 'jobs', 'many', '--state', 'pending', '--start', '2'));
  expect(defaultPage.map((j) => j.id)).toEqual(Array.from({ length: 100 }, (_, i) => `m${i + 2}`));
  const delayed = await relq(prefix, 'jobs', 'work', '--state', 'delayed');
  expect(delayed.stdout).toMatch(/^ID\s+NAME\s+ATTEMPTS\s+CREATED\s+WHEN\s+LAST ERROR$/m);
  expect(delayed.stdout).toMatch(/^later\s+0\/3\s/m);

  const job = json(await relq(prefix, '--json', 'job', 'work', 'a'));
  expect(job).toEqual(JSON.parse(JSON.stringify(await q.getJob('a'))));
  const text = await relq(prefix, 'job', 'work', 'a');
  expect(text.stdout).toMatch(/^state\s+pending$/m);
  expect(text.stdout).toMatch(/^data\s+"a"$/m);
  const deduplicated = await queue<string>('renders', prefix).add('r', { deduplication: { id: 'render:d-7' } });
  expect((await relq(prefix, 'job', 'renders', deduplicated.id)).stdout).toMatch(/^deduplication id\s+render:d-7$/m);
  // a flow's parent and child name each other
  const orders = queue<string>('{cli}-orders', prefix);
  await orders.addFlow({ data: 'ship', opts: { jobId: 'ship' }, children: [{ data: 'mail', queue: '{cli}-mails', opts: { jobId: 'mail' } }, { data: 'pack', opts: { jobId: 'pack' } }] });
  expect((await relq(prefix, 'job', '{cli}-mails', 'mail')).stdout).toMatch(/^parent\s+ship in queue \{cli\}-orders$/m);
  await orders.ack((await orders.lease())[0]!, 'packed');
  expect((await relq(prefix, 'job', '{cli}-orders', 'ship')).stdout).toMatch(/^children\s+1 unfinished, 1 completed$/m);
}, 30_000);

test('a command reuses the counts that found its queue; an empty registered queue costs one ZSCORE, not the registry', async () => {
  const prefix = uniquePrefix();
  const q = queue('idle', prefix);
  await q.pause();
  await q.resume(); // registered, with no jobs and no pause
  const observer = q.client as Redis;
  const before = await commandStats(observer);
  const r = await relq(prefix, '--json', 'counts', 'idle');
  const delta = statsDelta(before, await commandStats(observer));
  expect(json(r)).toMatchObject({ pending: 0, paused: false });
  expect({ scripts: scriptCalls(delta), zscore: delta.zscore, zrange: delta.zrange }).toEqual({ scripts: 1, zscore: 1, zrange: undefined });
}, 30_000);

test('retry-dead and purge-dead in batches, with the filters of retryDead / purgeDead', async () => {
  const prefix = uniquePrefix();
  const q = queue<string>('dl', prefix);
  const alpha = await deadLetters(q, 'alpha', 5);
  const beta = await deadLetters(q, 'beta', 3);

  const retried = json(await relq(prefix, '--json', 'retry-dead', 'dl', '--name', 'alpha', '--batch', '2'));
  expect(retried).toEqual({ queue: 'dl', retried: 5, ids: alpha });
  expect(await q.counts()).toMatchObject({ pending: 5, dead: 3 });

  const one = json(await relq(prefix, '--json', 'purge-dead', 'dl', '--limit', '1'));
  expect(one).toEqual({ queue: 'dl', purged: 1, ids: [beta[0]] });
  const byId = await relq(prefix, 'purge-dead', 'dl', '--id', beta[2]!, 'nope');
  expect(byId).toMatchObject({ code: 0, stdout: "purged 1 dead letter(s) of 'dl'\n" });
  expect((await q.listDead()).map((d) => d.id)).toEqual([beta[1]]);
  expect((await relq(prefix, 'retry-dead', 'dl', '--older-than', '3600000')).stdout).toBe("retried 0 dead letter(s) of 'dl'\n");
  expect((await relq(prefix, 'retry-dead', 'dl')).stdout).toBe("retried 1 dead letter(s) of 'dl'\n");
  expect(await q.counts()).toMatchObject({ pending: 6, dead: 0 });
}, 30_000);

test('a progress bar on a terminal only, never with --json or on a pipe', async () => {
  const prefix = uniquePrefix();
  const q = queue<string>('bar', prefix);
  await deadLetters(q, 'x', 30);
  const onTerminal = await cli.runInTerminal(['--redis', bed.redis.url, '--prefix', prefix, 'retry-dead', 'bar', '--name', 'x', '--limit', '10', '--batch', '4']);
  expect(onTerminal.code).toBe(0);
  expect(onTerminal.stdout).toMatch(/retrying \[.*\] 10\/10 jobs/);
  expect(onTerminal.stdout).toContain("retried 10 dead letter(s) of 'bar'");
  const jsonOnTerminal = await cli.runInTerminal(['--redis', bed.redis.url, '--prefix', prefix, '--json', 'purge-dead', 'bar', '--limit', '10', '--batch', '4']);
  expect(jsonOnTerminal.code).toBe(0);
  expect(JSON.parse(jsonOnTerminal.stdout)).toMatchObject({ purged: 10 });
  const piped = await relq(prefix, 'purge-dead', 'bar', '--batch', '4');
  expect(piped).toMatchObject({ code: 0, stderr: '', stdout: "purged 10 dead letter(s) of 'bar'\n" });
}, 30_000);

test('workers: the live workers of a queue, as a table and as JSON; none on a queue without any', async () => {
  const prefix = uniquePrefix();
  expect(await relq(prefix, 'workers', 'idle')).toMatchObject({ code: 0, stdout: `no live workers on 'idle' with prefix '${prefix}'\n` });
  const w = new Worker(queue('busy', prefix), async () => undefined, { concurrency: 3, appName: 'mailer' });
  try {
    await waitUntil(async () => (await relq(prefix, '--json', 'workers', 'busy')).stdout.includes('mailer'), 'the worker listed', 10_000);
    const [listed] = json<WorkerInfo[]>(await relq(prefix, '--json', 'workers', 'busy'));
    expect(listed).toMatchObject({ queue: 'busy', pid: process.pid, appName: 'mailer', concurrency: 3, running: 0 });
    const text = (await relq(prefix, 'workers', 'busy')).stdout.split('\n');
    expect(text[0]).toMatch(/^HOST\s+PID\s+APP\s+CONCURRENCY\s+RUNNING\s+STARTED\s+LAST SEEN$/);
    expect(text[1]).toMatch(new RegExp(`^${listed!.host}\\s+${process.pid}\\s+mailer\\s+3\\s+0\\s+${new Date(listed!.startedAt).toISOString()}`));
  } finally {
    await w.close();
  }
  expect(json(await relq(prefix, '--json', 'workers', 'busy'))).toEqual([]);
}, 30_000);

test('pause and resume', async () => {
  const prefix = uniquePrefix();
  const q = queue('p', prefix);
  await q.add(1);
  expect(json(await relq(prefix, '--json', 'pause', 'p'))).toEqual({ queue: 'p', paused: true });
  expect(await q.isPaused()).toBe(true);
  expect(await relq(prefix, 'resume', 'p')).toMatchObject({ code: 0, stdout: "resumed 'p'\n" });
  expect(await q.isPaused()).toBe(false);
}, 30_000);

test('retry: a dead or completed job runs again; an unfinished one is refused (1), an unknown one is not found (4)', async () => {
  const prefix = uniquePrefix();
  const q = queue<string>('r', prefix);
  const [dead] = await deadLetters(q, 'd', 1);
  await q.add('done', { jobId: 'done' });
  await q.ack((await q.lease())[0]!);
  await q.add('waiting', { jobId: 'waiting' });
  expect(json(await relq(prefix, '--json', 'retry', 'r', dead!))).toEqual({ queue: 'r', id: dead, retried: 'dead' });
  expect(await relq(prefix, 'retry', 'r', 'done')).toMatchObject({ code: 0, stdout: "retried completed job 'done' of 'r': pending, with a fresh attempt budget\n" });
  expect(await q.getJob(dead!)).toMatchObject({ state: 'pending', failures: 1, failuresBeforeRedrive: 1, retries: 1 });
  expect(await q.getJob('done')).toMatchObject({ state: 'pending', retries: 1 });
  const job = await relq(prefix, 'job', 'r', dead!);
  expect(job.stdout).toMatch(/^attempts\s+attempt 1 of 1 next \(1 failed before the last retry\), leased 1 time\(s\), requeued 0$/m);
  expect(job.stdout).toMatch(/^retried\s+1 time\(s\)$/m);
  const refused = await relq(prefix, '--json', 'retry', 'r', 'waiting');
  expect(refused.code).toBe(1);
  expect(JSON.parse(refused.stderr)).toMatchObject({ error: { message: "job waiting of queue 'r' cannot be retried: it is pending: only completed and dead jobs are retried", exitCode: 1 } });
  const unknown = await relq(prefix, 'retry', 'r', 'missing');
  expect(unknown.code).toBe(4);
  expect(unknown.stderr).toContain("job missing of queue 'r' cannot be retried: no such job (or its retention ended)");
  expect((await relq(prefix, 'retry', 'nosuch', 'x')).code).toBe(4);
}, 30_000);

test('cancel: a waiting job is removed, a running one dead-lettered or retried (--retry); a finished one is refused (1), an unknown one is not found (4)', async () => {
  const prefix = uniquePrefix();
  const q = queue<string>('c', prefix);
  await q.add('waiting', { jobId: 'waiting' });
  await q.add('running', { jobId: 'running', attempts: 3 });
  await q.add('again', { jobId: 'again', attempts: 3, backoff: { type: 'fixed', delayMs: 60_000, jitter: 0 } });
  expect(json(await relq(prefix, '--json', 'cancel', 'c', 'waiting'))).toEqual({ queue: 'c', id: 'waiting', cancelled: 'removed' });
  expect(await q.getJob('waiting')).toBeNull();
  const [running, again] = await q.lease({ count: 2 });
  expect(await relq(prefix, 'cancel', 'c', 'running', '--reason', 'by hand')).toMatchObject({
    code: 0,
    stdout: "cancelled job 'running' of 'c': dead-lettered, its handler aborted\n",
  });
  expect(await q.getJob('running')).toMatchObject({ state: 'dead', lastError: 'CancelledError: job running was cancelled: by hand' });
  expect(json(await relq(prefix, '--json', 'cancel', 'c', 'again', '--retry'))).toEqual({ queue: 'c', id: 'again', cancelled: 'retried' });
  expect(await q.getJob('again')).toMatchObject({ state: 'delayed', failures: 1 });
  expect(await q.ack(running!)).toBe(false);
  expect(await q.ack(again!)).toBe(false);
  const finished = await relq(prefix, '--json', 'cancel', 'c', 'running');
  expect(finished.code).toBe(1);
  expect(JSON.parse(finished.stderr)).toMatchObject({ error: { message: "job 'running' of 'c' is dead: there is nothing to cancel", exitCode: 1 } });
  const unknown = await relq(prefix, 'cancel', 'c', 'missing');
  expect(unknown.code).toBe(4);
  expect(unknown.stderr).toContain("no job 'missing' in queue 'c'");
  expect((await relq(prefix, 'cancel', 'nosuch', 'x')).code).toBe(4);
}, 30_000);

test('concurrency: shows and sets the queue-wide limit and a group\'s own limits; bad values are usage errors (2), nothing written', async () => {
  const prefix = uniquePrefix();
  const q = queue<string>('lim', prefix);
  await q.add('a', { group: 'std' });
  expect(json(await relq(prefix, '--json', 'concurrency', 'lim'))).toEqual({ queue: 'lim', globalConcurrency: 0, groupConcurrency: 0, groupOverrides: {} });
  expect(await relq(prefix, 'concurrency', 'lim', '5')).toMatchObject({ code: 0, stdout: "'lim': global concurrency 5, per group none\n" });
  expect(await q.getGlobalConcurrency()).toBe(5);
  expect(json(await relq(prefix, '--json', 'concurrency', 'lim', '--group', 'vip', '10', '--rate', '20/1000'))).toEqual({
    queue: 'lim',
    group: 'vip',
    override: { concurrency: 10, limiter: { max: 20, durationMs: 1000 } },
  });
  expect(await relq(prefix, 'concurrency', 'lim')).toMatchObject({
    code: 0,
    stdout: "'lim': global concurrency 5, per group none\n  group 'vip': concurrency 10, rate 20 per 1000 ms\n",
  });
  // each a process of its own: one limit that is no whole number, one --rate, one group name
  for (const bad of [['lim', '1.5'], ['lim', '--group', 'vip', '--rate', '20'], ['lim', '--group', 'a{b}', '2']]) {
    const r = await relq(prefix, 'concurrency', ...bad);
    expect([bad, r.code]).toEqual([bad, 2]);
  }
  expect(await q.getGlobalConcurrency()).toBe(5);
  expect(await q.getGroupOverrides()).toEqual({ vip: { concurrency: 10, limiter: { max: 20, durationMs: 1000 } } });
  expect(await relq(prefix, 'concurrency', 'lim', '--group', 'vip', '--clear')).toMatchObject({ code: 0 });
  expect(json(await relq(prefix, '--json', 'concurrency', 'lim', '0'))).toMatchObject({ globalConcurrency: 0, groupOverrides: {} });
  expect((await relq(prefix, 'concurrency', 'nosuch', '3')).code).toBe(4);
}, 30_000);

test('exit codes: 2 for usage errors, 4 for an unknown queue or job (nothing written)', async () => {
  const prefix = uniquePrefix();
  await queue('known', prefix).add(1);
  const unknownCommand = await relq(prefix, 'frobnicate');
  expect(unknownCommand.code).toBe(2);
  expect(unknownCommand.stderr).toContain("unknown command 'frobnicate'");
  expect((await relq(prefix, 'jobs', 'known', '--state', 'sleeping')).code).toBe(2);
  expect((await relq(prefix, 'jobs', 'known')).code).toBe(2); // --state is required
  expect((await relq(prefix, 'jobs', 'known', '--state', 'pending', '--start', '-1')).code).toBe(2);
  expect((await relq(prefix, 'retry-dead', 'known', '--id', 'x', '--limit', '2')).code).toBe(2);
  expect((await relq('bad:prefix', 'counts', 'known')).code).toBe(2);
  expect(await cli.run(['--help'])).toMatchObject({ code: 0 });
  const noCommand = await cli.run([]);
  expect(noCommand.code).toBe(2);
  expect(noCommand.stderr).toContain('Usage: relq');

  for (const args of [['counts', 'nosuch'], ['pause', 'nosuch'], ['retry-dead', 'nosuch'], ['job', 'nosuch', '1']]) {
    const r = await relq(prefix, ...args);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`no queue 'nosuch' with prefix '${prefix}'`);
  }
  const noJob = await relq(prefix, '--json', 'job', 'known', 'missing');
  expect(noJob.code).toBe(4);
  expect(JSON.parse(noJob.stderr)).toEqual({ error: { code: 'RELQ_CLI', message: "no job 'missing' in queue 'known'", exitCode: 4 } });
  expect((await relq(prefix, 'queues')).stdout).not.toContain('nosuch');
}, 60_000);

test('watch prints the events of other processes (JSON lines or text) and exits 0 on SIGINT', async () => {
  const prefix = uniquePrefix();
  const q = queue<string>('live', prefix);
  const w = cli.start(['--redis', bed.redis.url, '--prefix', prefix, '--json', 'watch', 'live']);
  const observer = q.client;
  await waitUntil(async () => (await observer.exists(q.keys.byName.listeners)) === 1, 'watch subscribed', 15_000);
  await q.add('hello', { jobId: 'w1' });
  await waitUntil(() => w.stdout().includes('"w1"'), 'event printed', 10_000);
  const [event] = w.stdout().trim().split('\n').map((l) => JSON.parse(l));
  expect(event).toMatchObject({ type: 'added', queue: 'live', id: 'w1' });
  w.proc.kill('SIGINT');
  expect(await w.done).toMatchObject({ code: 0, signal: null });

  const text = cli.start(['--redis', bed.redis.url, '--prefix', prefix, 'watch', 'live']);
  await waitUntil(() => text.stderr().includes("watching 'live' (Ctrl-C to stop)"), 'watch started', 15_000);
  // the listeners key outlives the first watcher: add until this one has seen a job
  let n = 0;
  await waitUntil(
    async () => {
      await q.add('again', { jobId: `t${n++}` });
      return /^\S+Z added\s+t\d+$/m.test(text.stdout());
    },
    'text event printed',
    15_000,
    200,
  );
  text.proc.kill('SIGINT');
  expect((await text.done).code).toBe(0);
}, 45_000);

test("metrics: a queue's metrics history, written by this process, read by the CLI's", async () => {
  const prefix = uniquePrefix();
  const q = new Queue<string>('ledger', { connection: bed.redis.url, prefix, metrics: { keepMinutes: 30 } });
  try {
    await q.add('a');
    await q.add('b', { attempts: 1 });
    const [ok, bad] = await q.lease({ count: 2 });
    await q.ack(ok!);
    await q.nack(bad!, { error: 'no' });
    const history = json<{ keepMinutes: number; points: unknown[]; total: { completed: number; dead: number; runTime: { count: number } } }>(
      await relq(prefix, '--json', 'metrics', 'ledger'),
    );
    expect(history).toEqual(await q.getMetrics());
    expect(history.keepMinutes).toBe(30);
    expect(history.total).toMatchObject({ completed: 1, dead: 1, runTime: { count: 2 } });
    const text = await relq(prefix, 'metrics', 'ledger');
    expect(text.stdout).toMatch(/^MINUTE\s+COMPLETED\s+FAILED\s+DEAD\s+RUN MS P50 \/ P95 \/ P99$/m);
    expect(text.stdout).toMatch(/^completed\s+1$/m);
    expect(text.stdout).toMatch(/^kept minutes\s+30$/m);
    // a range that saw nothing, and a bad time (a usage error)
    const old = await relq(prefix, 'metrics', 'ledger', '--from', '2001-01-01T00:00:00Z', '--to', '2001-01-01T00:10:00Z');
    expect(old.stdout).toContain('no attempts ended in this range');
    expect((await relq(prefix, 'metrics', 'ledger', '--from', 'yesterday')).code).toBe(2);
    // a queue without it
    await queue<string>('plain', prefix).add('x');
    expect((await relq(prefix, 'metrics', 'plain')).stdout).toContain("'plain' keeps no metrics history");
  } finally {
    await q.close();
  }
}, 30_000);
