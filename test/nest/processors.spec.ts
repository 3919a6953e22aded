import { Inject, Injectable, Module, Scope } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import {
  CancelledError,
  InjectQueue,
  OnWorkerEvent,
  Process,
  Processor,
  Queue,
  QueueModule,
  QueueRegistry,
  UnrecoverableError,
  type Job,
  type LeasedJob,
} from '../../lib/nest/index.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { deferred, sleep, sweptAfter, waitFor, useApps } from './app-bed.js';

const bed = useApps();
const { start } = bed;

function root(extra: Record<string, unknown> = {}) {
  return QueueModule.forRoot({
    connection: bed.redis.url,
    prefix: uniquePrefix(),
    defaults: { processor: { blockMs: 200, leaseMs: 1000 } },
    shutdown: { drainTimeoutMs: 200 },
    ...extra,
  });
}

interface Mail {
  to: string;
}

test('default and named handlers are discovered and jobs are routed by name', async () => {
  const calls: string[] = [];

  @Processor('mail')
  class MailProcessor {
    @Process()
    plain(job: Job<Mail>): string {
      calls.push(`default:${job.data.to}`);
      return `plain ${job.data.to}`;
    }

    @Process('welcome')
    async welcome(job: Job<Mail>): Promise<string> {
      calls.push(`welcome:${job.data.to}`);
      return `welcome ${job.data.to}`;
    }
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'mail' })], providers: [MailProcessor] })
  class MailModule {}

  const app = await start(root(), MailModule);
  const queue = app.get(QueueRegistry).getQueue<Mail, string>('mail');
  const a = await queue.add({ to: 'a' });
  const b = await queue.add({ to: 'b' }, { name: 'welcome' });
  const c = await queue.add({ to: 'c' }, { name: 'unknown-name' });
  expect(await queue.waitForResult(a.id, { timeoutMs: 3000 })).toBe('plain a');
  expect(await queue.waitForResult(b.id, { timeoutMs: 3000 })).toBe('welcome b');
  // A name without its own handler goes to the default one.
  expect(await queue.waitForResult(c.id, { timeoutMs: 3000 })).toBe('plain c');
  expect(calls.sort()).toEqual(['default:a', 'default:c', 'welcome:b']);

  const [status] = app.get(QueueRegistry).getProcessors();
  expect(status).toMatchObject({ processor: 'MailProcessor', queue: 'mail', concurrency: 2 });
  expect(status!.handlers.map((h) => h.jobName).sort()).toEqual([null, 'welcome'].sort());
});

test('a job name without handler and no default handler is dead-lettered with a clear reason', async () => {
  @Processor('only-named')
  class OnlyNamed {
    @Process('a')
    a(): string {
      return 'a';
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'only-named' })], providers: [OnlyNamed] })
  class M {}

  const app = await start(root(), M);
  const queue = app.get(QueueRegistry).getQueue('only-named');
  const { id } = await queue.add({}, { name: 'b' });
  await waitFor(async () => (await queue.getJob(id))?.state === 'dead', 3000, 'dead letter');
  const info = await queue.getJob(id);
  expect(info?.lastError).toMatch(/no handler for job name 'b' in OnlyNamed/);
});

test('per-handler concurrency is honoured; jobs waiting for their handler stay leased (heartbeated)', async () => {
  let slowRunning = 0;
  let slowMax = 0;
  let fastDone = 0;
  const gate = deferred();

  let slowRuns = 0;

  // A short lease: waiting jobs must stay leased (heartbeated) while they wait their turn.
  const LEASE_MS = 600;
  @Processor('conc', { leaseMs: LEASE_MS })
  class ConcProcessor {
    @Process('slow', { concurrency: 2 })
    async slow(): Promise<void> {
      slowRuns += 1;
      slowRunning += 1;
      slowMax = Math.max(slowMax, slowRunning);
      await gate.promise;
      await sleep(20);
      slowRunning -= 1;
    }

    @Process({ concurrency: 3 })
    async fast(): Promise<void> {
      fastDone += 1;
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'conc' })], providers: [ConcProcessor] })
  class M {}

  const app = await start(root({ sweeper: { intervalMs: 100 } }), M);
  const registry = app.get(QueueRegistry);
  const queue = registry.getQueue('conc');
  const slowJobs = await queue.addBulk(Array.from({ length: 6 }, () => ({ data: {}, opts: { name: 'slow' } })));
  // The loop leases up to 2 + 3 = 5 jobs; only 2 slow ones may run, the rest wait (leased).
  await waitFor(() => slowRunning === 2, 10_000, 'two slow jobs running');
  await waitFor(async () => (await queue.counts()).working === 5, 10_000, 'five slow jobs leased');
  const leased: Array<{ id: string; deadline: number }> = [];
  for (const j of slowJobs) {
    const info = await queue.getJob(j.id);
    if (info?.state === 'working') leased.push({ id: j.id, deadline: info.leaseDeadline! });
  }
  // Held until a sweep (every ~100 ms) that began two more lease lengths after their first
  // deadlines, checking on every poll that none of them was reclaimed meanwhile.
  const seen = new Set<string>();
  await sweptAfter(registry, 'conc', Math.max(...leased.map((l) => l.deadline)) + 2 * LEASE_MS, async () => {
    for (const l of leased) {
      const info = await queue.getJob(l.id);
      seen.add(`${info?.state} failures=${info?.failures}`);
    }
  });
  expect([...seen]).toEqual(['working failures=0']);
  expect(slowRunning).toBe(2);
  const [st] = registry.getProcessors();
  expect(st!.concurrency).toBe(5);
  const slowStatus = st!.handlers.find((h) => h.jobName === 'slow')!;
  expect(slowStatus.active).toBe(2);
  expect(slowStatus.waiting).toBe(3);

  // Every loop slot is held (2 running + 3 waiting), so default jobs wait to be leased
  // (the documented trade-off). Release the gate and everything drains.
  await queue.addBulk(Array.from({ length: 4 }, () => ({ data: {} })));
  gate.resolve();
  await waitFor(async () => (await queue.counts()).completed === 10, 10_000, 'all 10 completed');
  expect(slowMax).toBe(2);
  expect(fastDone).toBe(4);
  // No lease expired while jobs waited for a slot: each ran once, no failed attempt.
  expect(slowRuns).toBe(6);
  expect(await queue.listDead()).toEqual([]);
});

test('a throw is retried with backoff, then dead-lettered; UnrecoverableError dead-letters at once; events reach @OnWorkerEvent', async () => {
  const events: string[] = [];
  let fatalRuns = 0;

  @Processor('flaky')
  class Flaky {
    @Process()
    run(job: Job<{ kind: string }>): string {
      if (job.data.kind === 'fatal') {
        fatalRuns += 1;
        throw new UnrecoverableError('bad input');
      }
      if (job.data.kind === 'twice' && job.attempt < 3) throw new Error(`boom ${job.attempt}`);
      if (job.data.kind === 'always') throw new Error(`always ${job.attempt}`);
      return `ok after ${job.attempt}`;
    }

    @OnWorkerEvent('failed')
    onFailed(job: LeasedJob<{ kind: string }>, error: Error, willRetry: boolean): void {
      events.push(`failed:${job.data.kind}:${job.attempt}:${willRetry}:${error.message}`);
    }

    @OnWorkerEvent('dead')
    onDead(job: LeasedJob<{ kind: string }>): void {
      events.push(`dead:${job.data.kind}`);
    }

    @OnWorkerEvent('completed')
    onCompleted(job: LeasedJob<{ kind: string }>, result: string): void {
      events.push(`completed:${job.data.kind}:${result}`);
      throw new Error('a listener that throws is only logged');
    }
  }
  @Module({
    imports: [
      QueueModule.registerQueue({
        name: 'flaky',
        defaults: { job: { attempts: 3, backoff: { type: 'fixed', delayMs: 50, jitter: 0 } } },
      }),
    ],
    providers: [Flaky],
  })
  class M {}

  const app = await start(root(), M);
  const queue = app.get(QueueRegistry).getQueue<{ kind: string }, string>('flaky');
  const twice = await queue.add({ kind: 'twice' });
  const always = await queue.add({ kind: 'always' });
  const fatal = await queue.add({ kind: 'fatal' });
  expect(await queue.waitForResult(twice.id, { timeoutMs: 5000 })).toBe('ok after 3');
  await waitFor(async () => (await queue.getJob(always.id))?.state === 'dead', 5000, 'always dead');
  await waitFor(async () => (await queue.getJob(fatal.id))?.state === 'dead', 5000, 'fatal dead');
  const alwaysInfo = await queue.getJob(always.id);
  expect(alwaysInfo).toMatchObject({ failures: 3, lastError: expect.stringContaining('always 3') });
  const fatalInfo = await queue.getJob(fatal.id);
  expect(fatalInfo).toMatchObject({ state: 'dead', lastError: expect.stringContaining('bad input') });
  expect(fatalRuns).toBe(1); // no retry
  const dead = await queue.listDead();
  expect(dead.map((d) => d.id).sort()).toEqual([always.id, fatal.id].sort());

  await waitFor(() => events.includes('dead:always') && events.includes('dead:fatal'), 2000, 'dead events');
  expect(events).toEqual(
    expect.arrayContaining([
      'failed:twice:1:true:boom 1',
      'failed:twice:2:true:boom 2',
      'completed:twice:ok after 3',
      'failed:always:1:true:always 1',
      'failed:always:3:false:always 3',
      'dead:always',
      'dead:fatal',
    ]),
  );
});

test("@Processor's backoffStrategies choose the delay of a retry, or dead-letter at once", async () => {
  const asked: Array<[number, string]> = [];
  @Processor('strategic', {
    backoffStrategies: {
      upstream: (attempt, error) => {
        asked.push([attempt, (error as Error).message]);
        return (error as Error).message === 'permanent' ? 'dead' : 60_000;
      },
    },
  })
  class Strategic {
    @Process()
    run(job: Job<{ permanent: boolean }>): never {
      throw new Error(job.data.permanent ? 'permanent' : 'busy');
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'strategic' })], providers: [Strategic] })
  class M {}

  const app = await start(root(), M);
  const queue = app.get(QueueRegistry).getQueue<{ permanent: boolean }>('strategic');
  const backoff = { type: 'custom' as const, strategy: 'upstream' };
  const busy = await queue.add({ permanent: false }, { attempts: 5, backoff });
  const permanent = await queue.add({ permanent: true }, { attempts: 5, backoff });
  const before = Date.now();
  await waitFor(async () => (await queue.getJob(busy.id))?.state === 'delayed', 3000, 'the busy job delayed');
  await waitFor(async () => (await queue.getJob(permanent.id))?.state === 'dead', 3000, 'the permanent job dead');
  expect((await queue.getJob(busy.id))!.runAt).toBeGreaterThanOrEqual(before + 60_000 - 1000); // the strategy's delay, give or take the clocks
  expect(await queue.getJob(permanent.id)).toMatchObject({ failures: 1, lastError: 'Error: permanent' });
  expect(asked.sort()).toEqual([[1, 'busy'], [1, 'permanent']]);
});

test('a @Process() step job saves each step and snoozes; its worker reports only the completion', async () => {
  const seen: string[] = [];
  @Processor('steps')
  class Steps {
    @Process({ concurrency: 1 })
    async run(job: Job<{ step: number }>): Promise<string | undefined> {
      seen.push(`step ${job.data.step}, attempt ${job.attempt}`);
      if (job.data.step === 3) return 'done';
      await job.updateData({ step: job.data.step + 1 });
      await job.snooze(20);
      return undefined; // dropped: the attempt ended with the snooze
    }

    @OnWorkerEvent('completed')
    @OnWorkerEvent('failed')
    @OnWorkerEvent('lost')
    onEvent(job: LeasedJob<{ step: number }>): void {
      seen.push(`event for step ${job.data.step}`);
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'steps' })], providers: [Steps] })
  class M {}

  const app = await start(root(), M);
  const queue = app.get(QueueRegistry).getQueue<{ step: number }, string>('steps');
  const { id } = await queue.add({ step: 1 }, { attempts: 1 });
  expect(await queue.waitForResult(id, { timeoutMs: 5000 })).toBe('done');
  await waitFor(() => seen.length === 4, 3000, 'the completed event');
  expect(seen).toEqual(['step 1, attempt 1', 'step 2, attempt 1', 'step 3, attempt 1', 'event for step 3']);
  expect(await queue.getJob(id)).toMatchObject({ failures: 0, requeues: 2 });
});

test('a @Process() parent fans out into another queue of its {tag}, waits for its children and resumes with their results', async () => {
  type Work = { parts: number; step: 'split' | 'join' };
  const seen: string[] = [];
  @Processor('{fan}-reports')
  class Reports {
    @Process()
    async run(job: Job<Work>): Promise<number | undefined> {
      seen.push(job.data.step);
      if (job.data.step === 'join') return Object.values(await job.childrenResults<number>()).reduce((a, b) => a + b, 0);
      const parts = Array.from({ length: job.data.parts }, (_, i) => ({ data: i + 1, queue: '{fan}-parts', opts: { jobId: `${job.id}-${i}` } }));
      await job.addChildren(parts);
      await job.updateData({ ...job.data, step: 'join' });
      await job.waitForChildren();
      return undefined; // dropped: the attempt ended with the wait
    }

    @OnWorkerEvent('completed')
    onCompleted(job: LeasedJob<Work>): void {
      seen.push(`completed ${job.data.step}`);
    }
  }
  @Processor('{fan}-parts')
  class Parts {
    @Process({ concurrency: 2 })
    run(job: Job<number>): number {
      if (job.parent?.queue !== '{fan}-reports') throw new Error(`parent ${JSON.stringify(job.parent)}`);
      return job.data * job.data;
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: '{fan}-reports' }, { name: '{fan}-parts' })], providers: [Reports, Parts] })
  class M {}

  const app = await start(root(), M);
  const queue = app.get(QueueRegistry).getQueue<Work, number>('{fan}-reports');
  const { id } = await queue.add({ parts: 3, step: 'split' });
  expect(await queue.waitForResult(id, { timeoutMs: 5000 })).toBe(14);
  await waitFor(() => seen.length === 3, 3000, 'the completed event');
  expect(seen).toEqual(['split', 'join', 'completed join']);
  expect(await queue.getJob(id)).toMatchObject({ failures: 0, requeues: 1, children: { unfinished: 0, results: { [`${id}-0`]: 1, [`${id}-1`]: 4, [`${id}-2`]: 9 } } });
});

test('request-scoped processors get a fresh instance per job, with the job as REQUEST', async () => {
  const seen: Array<{ instance: number; jobId: string }> = [];
  let instances = 0;

  @Injectable()
  class Counter {
    next(): number {
      return ++instances;
    }
  }

  @Processor('scoped', { scope: Scope.REQUEST })
  class ScopedProcessor {
    private readonly n: number;
    constructor(
      counter: Counter,
      @Inject(REQUEST) private readonly job: Job<unknown>,
    ) {
      this.n = counter.next();
    }

    @Process()
    run(job: Job<unknown>): number {
      seen.push({ instance: this.n, jobId: this.job.id });
      expect(this.job.id).toBe(job.id);
      return this.n;
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'scoped' })], providers: [Counter, ScopedProcessor] })
  class M {}

  const app = await start(root(), M);
  const queue = app.get(QueueRegistry).getQueue('scoped');
  const a = await queue.add({});
  const b = await queue.add({});
  const ra = await queue.waitForResult(a.id, { timeoutMs: 3000 });
  const rb = await queue.waitForResult(b.id, { timeoutMs: 3000 });
  expect(ra).not.toBe(rb);
  expect(seen.map((s) => s.jobId).sort()).toEqual([a.id, b.id].sort());
});

test('typed injection with @InjectQueue in a feature module service', async () => {
  interface Invoice {
    amount: number;
  }

  @Injectable()
  class Billing {
    constructor(@InjectQueue('invoices') readonly invoices: Queue<Invoice, { ok: boolean }>) {}

    bill(amount: number) {
      return this.invoices.add({ amount });
    }
  }

  @Processor('invoices')
  class InvoiceProcessor {
    @Process()
    run(job: Job<Invoice>): { ok: boolean } {
      return { ok: job.data.amount > 0 };
    }
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'invoices' })], providers: [Billing, InvoiceProcessor] })
  class BillingModule {}

  const app = await start(root(), BillingModule);
  const billing = app.get(Billing);
  expect(billing.invoices).toBeInstanceOf(Queue);
  expect(billing.invoices).toBe(app.get(QueueRegistry).getQueue('invoices'));
  const { id } = await billing.bill(10);
  const result: { ok: boolean } | undefined = await billing.invoices.waitForResult(id, { timeoutMs: 3000 });
  expect(result).toEqual({ ok: true });
});

test("cancel through @InjectQueue's Queue: the running @Process handler's signal aborts with CancelledError, @OnWorkerEvent('cancelled') hears it", async () => {
  const reasons: unknown[] = [];
  const heard: Array<[string, unknown]> = [];
  const started = deferred<string>();

  @Injectable()
  class Exports {
    constructor(@InjectQueue('exports') readonly exports: Queue<{ report: string }, string>) {}

    stop(id: string) {
      return this.exports.cancel(id, { reason: 'superseded' });
    }
  }

  // the default 30 s lease: the abort comes from the cancel's notice, not from a heartbeat
  @Processor('exports', { leaseMs: 30_000 })
  class ExportProcessor {
    @Process()
    async run(job: Job<{ report: string }>): Promise<string> {
      started.resolve(job.id);
      await new Promise((resolve) => job.signal.addEventListener('abort', resolve, { once: true }));
      reasons.push(job.signal.reason);
      throw job.signal.reason;
    }

    @OnWorkerEvent('cancelled')
    cancelled(job: LeasedJob<unknown>, error: unknown) {
      heard.push([job.id, error]);
    }
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'exports' })], providers: [Exports, ExportProcessor] })
  class ExportsModule {}

  const app = await start(root(), ExportsModule);
  const service = app.get(Exports);
  const obs = redisClient(bed.redis);
  const listeners = async () => Number(((await obs.call('PUBSUB', 'SHARDNUMSUB', service.exports.keys.derived.cancels)) as [string, number])[1]);
  await waitFor(async () => (await listeners()) === 1, 3000, 'the workers listen to cancels').finally(() => obs.quit());
  const { id } = await service.exports.add({ report: 'q3' });
  expect(await started.promise).toBe(id);
  const cancelledAt = Date.now();
  expect(await service.stop(id)).toBe('dead');
  await waitFor(() => heard.length === 1, 2000, "@OnWorkerEvent('cancelled')");
  expect(Date.now() - cancelledAt).toBeLessThan(2000);
  expect(reasons).toHaveLength(1);
  expect(reasons[0]).toBeInstanceOf(CancelledError);
  expect(heard[0]).toEqual([id, reasons[0]]);
  expect(await service.exports.getJob(id)).toMatchObject({ state: 'dead', lastError: `CancelledError: job ${id} was cancelled: superseded` });
});

test('relq logs failures, dead letters and listener errors, and stays quiet about completed jobs', async () => {
  const lines: string[] = [];
  const capture = (level: string) => (message: unknown) => void lines.push(`${level} ${String(message)}`);
  const logger = { log: capture('log'), warn: capture('warn'), error: capture('error'), debug: capture('debug'), verbose: capture('verbose') };

  @Processor('logged')
  class Logged {
    @Process()
    run(job: Job<{ fail: boolean }>): string {
      if (job.data.fail) throw new Error('nope');
      return 'ok';
    }
  }
  @Module({
    imports: [QueueModule.registerQueue({ name: 'logged', defaults: { job: { attempts: 2, backoff: { type: 'fixed', delayMs: 10 } } } })],
    providers: [Logged],
  })
  class M {}

  const app = await start(root(), M);
  app.useLogger(logger);
  const queue = app.get(QueueRegistry).getQueue<{ fail: boolean }, string>('logged');
  const ok = await queue.add({ fail: false });
  const bad = await queue.add({ fail: true });
  await queue.waitForResult(ok.id, { timeoutMs: 3000 });
  await waitFor(async () => (await queue.getJob(bad.id))?.state === 'dead', 3000, 'dead');
  await waitFor(() => lines.some((l) => l.startsWith('error')), 2000, 'dead-letter log');
  expect(lines.filter((l) => l.includes(ok.id) || l.includes('completed'))).toEqual([]);
  expect(lines).toEqual(
    expect.arrayContaining([
      expect.stringMatching(new RegExp(`^warn job ${bad.id.replace('.', '\\.')} of 'logged' failed \\(attempt 1/2\\), will retry: nope`)),
      expect.stringMatching(new RegExp(`^error job ${bad.id.replace('.', '\\.')} of 'logged' dead-lettered after attempt 2: nope`)),
    ]),
  );
});
