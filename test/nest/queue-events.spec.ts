/**
 * @QueueEventsListener + @OnQueueEvent: the events of a queue from every process, with
 * BullMQ's names and argument shapes, subscribed on bootstrap, again after a Redis restart,
 * and closed on shutdown.
 */
import { Module } from '@nestjs/common';
import { OnQueueEvent, Queue, QueueEventsListener, QueueModule, QueueRegistry, type QueueEvent } from '../../lib/nest/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { deferred, startApp, waitFor } from './app-bed.js';
import { Test, type TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';

let redis: TestRedis;
const closers: Array<() => Promise<unknown>> = [];
beforeAll(async () => {
  redis = await startRedis({ controllable: true });
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
});
afterAll(async () => {
  await redis?.stop();
});

type Heard = Array<[string, unknown, QueueEvent['type']]>;

function listenerModule(heard: Heard) {
  @QueueEventsListener('media')
  class MediaEvents {
    @OnQueueEvent('added')
    onAdded(args: { jobId: string; name: string }, event: QueueEvent): void {
      heard.push(['added', args, event.type]);
    }

    @OnQueueEvent('drained')
    onDrained(args: Record<string, never>, event: QueueEvent): void {
      heard.push(['drained', args, event.type]);
    }

    @OnQueueEvent('cleaned')
    onCleaned(args: { count: number; state: 'completed' | 'dead' }, event: QueueEvent): void {
      heard.push(['cleaned', args, event.type]);
    }

    @OnQueueEvent('active')
    onActive(args: { jobId: string; attempt: number }, event: QueueEvent): void {
      heard.push(['active', args, event.type]);
    }

    @OnQueueEvent('progress')
    onProgress(args: { jobId: string; data: unknown }, event: QueueEvent): void {
      heard.push(['progress', args, event.type]);
    }

    @OnQueueEvent('completed')
    onCompleted(args: { jobId: string; returnvalue: unknown }, event: QueueEvent): void {
      heard.push(['completed', args, event.type]);
    }

    @OnQueueEvent('failed')
    onFailed(args: { jobId: string; failedReason: string }, event: QueueEvent): void {
      heard.push(['failed', args, event.type]);
    }

    @OnQueueEvent('waiting')
    onWaiting(args: { jobId: string }, event: QueueEvent): void {
      heard.push(['waiting', args, event.type]);
    }

    @OnQueueEvent('delayed')
    onDelayed(args: { jobId: string; delay: number }, event: QueueEvent): void {
      heard.push(['delayed', args, event.type]);
    }

    @OnQueueEvent('paused')
    @OnQueueEvent('resumed')
    onPause(args: object, event: QueueEvent): void {
      heard.push([event.type, args, event.type]);
    }
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'media' })], providers: [MediaEvents] })
  class MediaModule {}
  return MediaModule;
}

async function startListening(prefix: string, heard: Heard): Promise<TestingModule> {
  const app = await startApp({ imports: [QueueModule.forRoot({ connection: redis.url, prefix }), listenerModule(heard)] });
  closers.push(() => app.close());
  return app;
}

/** A producer and consumer in "another process": a Queue object of its own. */
function elsewhere(prefix: string): Queue<string, unknown> {
  const q = new Queue<string, unknown>('media', { connection: redis.url, prefix });
  closers.push(() => q.close());
  return q;
}

test('events of jobs added and run elsewhere arrive with BullMQ-shaped arguments', async () => {
  const prefix = uniquePrefix();
  const heard: Heard = [];
  await startListening(prefix, heard); // subscribed once init() resolved
  const other = elsewhere(prefix);

  const ok = await other.add('song', { attempts: 1, name: 'transcode' });
  const bad = await other.add('noise', { attempts: 1 });
  const later = await other.add('jingle', { runAt: 4_102_444_800_000 }); // 2100-01-01
  const [a] = await other.lease({ count: 1, leaseMs: 5000 });
  await other.updateProgress(a!, { pct: 40 });
  await other.ack(a!, { seconds: 12 });
  const [b] = await other.lease({ count: 1, leaseMs: 5000 }); // the last pending job: drained
  await other.nack(b!, { error: 'codec missing' });
  await other.clean('dead');
  await other.pause();
  await other.resume();
  expect(await other.changeDelay(later.id, 60_000)).toBe(true);
  const { runAt } = (await other.getJob(later.id))!;

  await waitFor(() => heard.some(([, , t]) => t === 'delayed'), 5000, "the changeDelay's event");
  expect(heard).toEqual([
    ['added', { jobId: ok.id, name: 'transcode' }, 'added'],
    ['waiting', { jobId: ok.id }, 'added'],
    ['added', { jobId: bad.id, name: '' }, 'added'],
    ['waiting', { jobId: bad.id }, 'added'],
    ['added', { jobId: later.id, name: '' }, 'added'],
    ['delayed', { jobId: later.id, delay: 4_102_444_800_000 }, 'added'],
    ['active', { jobId: ok.id, attempt: 1 }, 'leased'],
    ['progress', { jobId: ok.id, data: { pct: 40 } }, 'progress'],
    ['completed', { jobId: ok.id, returnvalue: { seconds: 12 } }, 'completed'],
    ['active', { jobId: bad.id, attempt: 1 }, 'leased'],
    ['drained', {}, 'drained'],
    ['failed', { jobId: bad.id, failedReason: 'codec missing' }, 'dead'],
    ['cleaned', { count: 1, state: 'dead' }, 'cleaned'],
    ['paused', {}, 'paused'],
    ['resumed', {}, 'resumed'],
    ['delayed', { jobId: later.id, delay: runAt }, 'delayed'],
  ]);
});

test("'deduplicated': an add elsewhere met a deduplication id another job holds", async () => {
  const prefix = uniquePrefix();
  const heard: Array<[{ jobId: string; deduplicationId: string }, QueueEvent]> = [];

  @QueueEventsListener('renders')
  class RenderEvents {
    @OnQueueEvent('deduplicated')
    onDeduplicated(args: { jobId: string; deduplicationId: string }, event: QueueEvent): void {
      heard.push([args, event]);
    }
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'renders' })], providers: [RenderEvents] })
  class RenderModule {}

  const app = await startApp({ imports: [QueueModule.forRoot({ connection: redis.url, prefix }), RenderModule] });
  closers.push(() => app.close());
  const other = new Queue<string>('renders', { connection: redis.url, prefix });
  closers.push(() => other.close());
  const first = await other.add('v1', { deduplication: { id: 'doc-7' } });
  await other.add('v2', { deduplication: { id: 'doc-7' } });
  await waitFor(() => heard.length > 0, 5000, 'the deduplicated event');
  expect(heard).toEqual([[{ jobId: first.id, deduplicationId: 'doc-7' }, expect.objectContaining({ type: 'deduplicated', outcome: 'ignored' })]]);
});

test('the listener is subscribed before the schedulers start: the first scheduled job is heard', async () => {
  const prefix = uniquePrefix();
  const delayed: string[] = [];

  @QueueEventsListener('digest')
  class DigestEvents {
    @OnQueueEvent('delayed')
    onDelayed({ jobId }: { jobId: string }): void {
      delayed.push(jobId);
    }
  }

  const schedulers = [{ id: 'nightly', spec: { cron: '0 0 3 * * *' } }];
  @Module({ imports: [QueueModule.registerQueue({ name: 'digest', schedulers })], providers: [DigestEvents] })
  class DigestModule {}

  const app = await startApp({ imports: [QueueModule.forRoot({ connection: redis.url, prefix }), DigestModule] });
  closers.push(() => app.close());
  // the upsert at bootstrap queued the first slot's job, publishing 'added' with its due time
  await waitFor(() => delayed.length > 0, 5000, "the scheduler's first job as 'delayed'");
  expect(delayed).toEqual([expect.stringMatching(/^repeat:nightly:/)]);
});

test('a listener of a queue registered with events: false starts with a warning: it hears only other processes', async () => {
  @QueueEventsListener('quiet')
  class QuietEvents {
    @OnQueueEvent('added')
    onAdded(): void {}
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'quiet', events: false })], providers: [QuietEvents] })
  class QuietModule {}

  const warnings: string[] = [];
  const app = await Test.createTestingModule({ imports: [QueueModule.forRoot({ connection: redis.url, prefix: uniquePrefix() }), QuietModule] }).compile();
  app.useLogger({ log() {}, error() {}, warn: (m: unknown) => void warnings.push(String(m)) });
  closers.push(() => app.close());
  await app.init();
  expect(warnings).toContainEqual(
    "@QueueEventsListener('quiet') QuietEvents: queue 'quiet' is registered with events: false, so this app publishes none of its events; " +
      'the listener hears only those of other processes that publish them',
  );
});

test('the listener hears events again after Redis restarts, and nothing after shutdown', async () => {
  const prefix = uniquePrefix();
  const heard: Heard = [];
  const app = await startListening(prefix, heard);
  const other = elsewhere(prefix);
  const addedHeard = () => heard.filter(([t]) => t === 'added').length;
  await other.add('before');
  await waitFor(() => addedHeard() === 1, 5000, 'the first added event');

  await redis.restart();
  // the stream subscribes again by itself; an add after that is heard
  await waitFor(async () => {
    await other.add('after').catch(() => undefined); // the producer reconnects meanwhile
    return addedHeard() > 1;
  }, 30_000, 'an added event after the restart');

  await app.close();
  const before = heard.length;
  const late = elsewhere(prefix);
  // events are published (a subscriber of its own hears them), but the closed app hears none
  const seenBy = new Queue<string>('media', { connection: redis.url, prefix });
  closers.push(() => seenBy.close());
  const probe: QueueEvent[] = [];
  const sub = seenBy.events().subscribe((e) => probe.push(e));
  closers.push(async () => sub.unsubscribe());
  await waitFor(async () => {
    await late.add('probe');
    return probe.some((e) => e.type === 'added');
  }, 5000, 'a probe subscriber hearing an add');
  expect(heard.length).toBe(before);
});

/** A listener of queue 'slow' whose 'added' method waits for `gate`, then reads the queue. */
async function startSlowListener(prefix: string, drainTimeoutMs: number, gate: Promise<void>) {
  const entered = deferred();
  const outcome: string[] = [];

  @QueueEventsListener('slow')
  class SlowEvents {
    constructor(private readonly registry: QueueRegistry) {}

    @OnQueueEvent('added')
    async onAdded(): Promise<void> {
      entered.resolve();
      await gate;
      const counts = await this.registry.getQueue('slow').counts().then((c) => `pending ${c.pending}`, (err: Error) => err.name);
      outcome.push(counts);
    }
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'slow' })], providers: [SlowEvents] })
  class SlowModule {}

  const warnings: string[] = [];
  const app = await startApp({ imports: [QueueModule.forRoot({ connection: redis.url, prefix, shutdown: { drainTimeoutMs } }), SlowModule] });
  app.useLogger({ log() {}, error() {}, warn: (m: unknown) => void warnings.push(String(m)) });
  closers.push(() => app.close());
  await app.get(QueueRegistry).getQueue('slow').add('x');
  await entered.promise;
  return { app, outcome, warnings };
}

test('shutdown waits for @OnQueueEvent() calls still running before it closes the queues', async () => {
  const gate = deferred();
  const prefix = uniquePrefix();
  const { app, outcome } = await startSlowListener(prefix, 10_000, gate.promise);
  const admin = new Redis(redis.url);
  closers.push(() => admin.quit());
  const subscribers = async () => ((await admin.call('PUBSUB', 'SHARDNUMSUB', `{${prefix}:slow}:events`)) as [string, number])[1];
  expect(await subscribers()).toBe(1);
  let closed = false;
  const closing = app.close().then(() => (closed = true));
  // the shutdown is under way: the listener has unsubscribed, and is held by the running call
  await waitFor(async () => (await subscribers()) === 0, 5000, 'the listener to unsubscribe');
  expect(closed).toBe(false);
  gate.resolve();
  await closing;
  expect(outcome).toEqual(['pending 1']); // it ran to its end on an open queue
});

test('a call that does not finish holds the shutdown for at most shutdown.drainTimeoutMs, with a warning', async () => {
  const { app, outcome, warnings } = await startSlowListener(uniquePrefix(), 300, new Promise<void>(() => undefined));
  const t0 = Date.now();
  await app.close();
  expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
  expect(Date.now() - t0).toBeLessThan(3000);
  expect(outcome).toEqual([]);
  expect(warnings).toContainEqual(expect.stringMatching(/^SlowEvents: 1 @OnQueueEvent\(\) call\(s\) still running after 300 ms/));
});
