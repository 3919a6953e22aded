/**
 * relq/metrics: counters and histograms from this process's producers, workers and sweeps,
 * gauges read from Redis at scrape time. Scraped as Prometheus text from a private
 * registry, on a private redis-server.
 */
import { Counter, Registry } from 'prom-client';
import { RateLimitError, UnrecoverableError, ValidationError, Worker, type Job } from '../../lib/index.js';
import { RelqMetrics } from '../../lib/metrics/index.js';
import { commandStats, statsDelta, untilRedisTime, useRedis, waitUntil } from '../support/engine-harness.js';
import { parseExposition, type Exposition } from './exposition.js';

const res = useRedis();
const opened: RelqMetrics[] = [];
afterEach(() => {
  for (const m of opened.splice(0)) m.close();
});

function metrics(options: ConstructorParameters<typeof RelqMetrics>[0] = {}): RelqMetrics {
  const m = new RelqMetrics({ registry: new Registry(), ...options });
  opened.push(m);
  return m;
}

async function scrape(m: RelqMetrics): Promise<Exposition> {
  return parseExposition(await m.registry.metrics());
}

let n = 0;
const uniqueName = (base: string) => `${base}-${process.pid}-${++n}`;

test('jobs that complete, retry, die and meet a rate limit are counted per queue, with wait and processing times', async () => {
  const m = metrics();
  const name = uniqueName('mixed');
  const q = res.queue<string, string>(name, { defaults: { attempts: 2, backoff: 0 } });
  let limitedOnce = false;
  const w = res.worker(
    new Worker<string, string>(q, async (job: Job<string>) => {
      if (job.data === 'flaky' && job.attempt === 1) throw new Error('first try fails');
      if (job.data === 'doomed') throw new UnrecoverableError('never works');
      if (job.data === 'limited' && !limitedOnce) {
        limitedOnce = true;
        throw new RateLimitError(10);
      }
      return `done ${job.data}`;
    }, { concurrency: 2 }),
  );
  const ends: string[] = [];
  w.events.subscribe((e) => {
    if (e.type === 'completed' || e.type === 'dead') ends.push(e.job.data);
  });
  await q.addBulk(['ok-1', 'ok-2', 'flaky', 'doomed', 'limited'].map((data) => ({ data })));
  await q.add('ok-1', { jobId: 'once' });
  expect((await q.add('again', { jobId: 'once' })).created).toBe(false); // a duplicate adds nothing
  await waitUntil(() => ends.length === 6, 'every job to end', 10_000);

  const x = await scrape(m);
  const queue = { queue: name };
  expect(x.type('relq_jobs_added_total')).toBe('counter');
  expect(x.value('relq_jobs_added_total', queue)).toBe(6);
  expect(x.value('relq_jobs_completed_total', queue)).toBe(5); // ok-1, ok-2, flaky, limited, once
  expect(x.value('relq_jobs_failed_total', queue)).toBe(2); // flaky's first try, doomed
  expect(x.value('relq_jobs_retried_total', queue)).toBe(1);
  expect(x.value('relq_jobs_dead_lettered_total', queue)).toBe(1);
  expect(x.value('relq_jobs_rate_limited_total', queue)).toBe(1);
  expect(x.type('relq_job_wait_seconds')).toBe('histogram');
  // first attempts only: the six jobs once each (the rate-limited job's second run is still attempt 1)
  expect(x.value('relq_job_wait_seconds_count', queue)).toBe(7);
  // one per outcome: 5 completed, 2 failed, 1 rate-limited
  expect(x.value('relq_job_processing_seconds_count', queue)).toBe(8);
  expect(x.value('relq_job_processing_seconds_sum', queue)).toBeGreaterThan(0);
  expect(x.value('relq_job_processing_seconds_bucket', { ...queue, le: '+Inf' })).toBe(8);
  // gauges only for watched queues
  expect(x.value('relq_queue_jobs', { ...queue, state: 'dead' })).toBeUndefined();
});

test("every job added is counted, whatever added it: addFlow, a scheduler's upsert and its ticks", async () => {
  const m = metrics();
  const name = uniqueName('paths');
  const q = res.queue<string>(name);
  await q.addFlow({ data: 'report', opts: { jobId: 'root' }, children: [{ data: 'part-1' }, { data: 'part-2' }] });
  expect((await q.addFlow({ data: 'report', opts: { jobId: 'root' }, children: [{ data: 'part-3' }] })).created).toBe(false); // writes nothing
  await q.upsertScheduler('beat', { everyMs: 200, missed: 'skip' }); // queues its first slot's job
  const [beat] = await q.getSchedulers();
  await untilRedisTime(res.client(), beat!.nextRunAt!);
  expect(await q.runSchedulers()).toMatchObject({ advanced: 1, added: 1 }); // the following slot's job

  const jobsInRedis = await res.client().hlen(q.keys.byName.jobs);
  expect(jobsInRedis).toBe(5);
  expect((await scrape(m)).value('relq_jobs_added_total', { queue: name })).toBe(jobsInRedis);
});

test('a running job that is cancelled is counted as cancelled, with no processing time', async () => {
  const m = metrics();
  const name = uniqueName('cancels');
  const q = res.queue<string>(name);
  const w = res.worker(new Worker<string>(q, (job) => new Promise((resolve) => job.signal.addEventListener('abort', resolve))));
  const cancelled: string[] = [];
  w.events.subscribe((e) => {
    if (e.type === 'cancelled') cancelled.push(e.job.id);
  });
  const { id } = await q.add('long');
  await waitUntil(async () => (await q.getJob(id))?.state === 'working', 'the job to run');
  expect(await q.cancel(id)).toBe('dead');
  await waitUntil(() => cancelled.length === 1, 'the cancelled event');
  const x = await scrape(m);
  expect(x.value('relq_jobs_cancelled_total', { queue: name })).toBe(1);
  expect(x.value('relq_jobs_dead_lettered_total', { queue: name })).toBeUndefined(); // not this process's handler's outcome
  expect(x.value('relq_job_processing_seconds_count', { queue: name })).toBeUndefined();
});

test('the children a running job adds are counted once: a child that exists is not added again', async () => {
  const m = metrics();
  const name = uniqueName('children');
  const q = res.queue<string>(name);
  await q.add('parent', { jobId: 'p' });
  const [lease] = await q.lease();
  await q.addChildren(lease!, [{ data: 'a', opts: { jobId: 'a' } }, { data: 'b', children: [{ data: 'b1' }] }]);
  // a run again after a crash: 'a' and its children exist, 'c' is new
  const again = await q.addChildren(lease!, [{ data: 'a', opts: { jobId: 'a' }, children: [{ data: 'a1' }] }, { data: 'c' }]);
  expect(again.map((r) => r.created)).toEqual([false, true]);
  const jobsInRedis = await res.client().hlen(q.keys.byName.jobs);
  expect(jobsInRedis).toBe(5); // p, a, b, b1, c
  expect((await scrape(m)).value('relq_jobs_added_total', { queue: name })).toBe(jobsInRedis);
});

test('gauges are read from Redis at each scrape: jobs per state, the oldest pending job, paused', async () => {
  const m = metrics();
  const name = uniqueName('gauges');
  const q = res.queue<string>(name, { defaults: { attempts: 1 } });
  m.watchQueue(q);
  const empty = await scrape(m);
  expect(empty.type('relq_queue_jobs')).toBe('gauge');
  expect(empty.value('relq_queue_jobs', { queue: name, state: 'pending' })).toBe(0);
  expect(empty.value('relq_queue_oldest_pending_age_seconds', { queue: name })).toBe(0);

  await q.add('first');
  await q.addBulk([{ data: 'second' }, { data: 'third', opts: { priority: 5 } }, { data: 'later', opts: { delayMs: 60_000 } }]);
  const [lease] = await q.lease({ count: 1 }); // the priority-5 job
  await q.nack(lease!, { error: 'gone' }); // attempts: 1, dead
  const [working] = await q.lease({ count: 1 }); // 'first'
  expect(working!.job.data).toBe('first');
  const obs = res.client();
  const addedAt = Date.now();
  await q.add('fourth');
  await untilRedisTime(obs, addedAt + 1100); // 'second' has waited over a second
  await q.pause();

  const x = await scrape(m);
  const at = (state: string) => x.value('relq_queue_jobs', { queue: name, state });
  expect([at('pending'), at('working'), at('delayed'), at('completed'), at('dead'), at('waiting_children')]).toEqual([2, 1, 1, 0, 1, 0]);
  expect(x.value('relq_queue_oldest_pending_age_seconds', { queue: name })).toBeGreaterThanOrEqual(1);
  expect(x.value('relq_queue_paused', { queue: name })).toBe(1);

  await q.ack(working!, 'ok');
  await q.resume();
  const after = await scrape(m);
  expect(after.value('relq_queue_jobs', { queue: name, state: 'completed' })).toBe(1);
  expect(after.value('relq_queue_jobs', { queue: name, state: 'working' })).toBe(0);
  expect(after.value('relq_queue_paused', { queue: name })).toBe(0);

  m.unwatchQueue(q);
  expect((await scrape(m)).value('relq_queue_jobs', { queue: name, state: 'completed' })).toBeUndefined();
});

test('one counts call per watched queue per scrape, shared by the gauges', async () => {
  const m = metrics();
  const queues = [res.queue(uniqueName('a')), res.queue(uniqueName('b'))];
  for (const q of queues) m.watchQueue(q);
  const obs = res.client();
  await m.registry.metrics(); // scripts loaded
  const before = await commandStats(obs);
  await m.registry.metrics();
  const d = statsDelta(before, await commandStats(obs));
  // one script call per queue (FCALL, or EVALSHA where functions cannot load), one INFO: this read
  expect(['fcall', 'fcall_ro', 'evalsha', 'evalsha_ro'].reduce((sum, c) => sum + (d[c] ?? 0), 0)).toBe(2);
});

test('an expired lease returned by a sweep of this process counts as stalled (and dead-lettered past its attempts)', async () => {
  const m = metrics();
  const name = uniqueName('stalls');
  const q = res.queue<string>(name);
  await q.add('retried', { attempts: 2 });
  await q.add('last', { attempts: 1 });
  const leases = await q.lease({ count: 2, leaseMs: 50 });
  expect(leases).toHaveLength(2);
  await untilRedisTime(res.client(), Math.max(...leases.map((l) => l.deadline)) + 1);
  expect(await q.sweep()).toMatchObject({ stalled: 2, deadLettered: 1 });
  const x = await scrape(m);
  expect(x.value('relq_jobs_stalled_total', { queue: name })).toBe(2);
  expect(x.value('relq_jobs_dead_lettered_total', { queue: name })).toBe(1);
});

test('close() stops counting and removes the metrics; a prefix and buckets can be chosen; bad options are refused', async () => {
  const registry = new Registry();
  const m = new RelqMetrics({ registry, prefix: 'app_relq_', waitBuckets: [1, 10] });
  const name = uniqueName('closing');
  const q = res.queue<string>(name);
  await q.add('one');
  let x = parseExposition(await registry.metrics());
  expect(x.value('app_relq_jobs_added_total', { queue: name })).toBe(1);
  expect(x.value('app_relq_job_wait_seconds_bucket', { le: '10', queue: name })).toBeUndefined(); // nothing leased yet
  m.close();
  await q.add('two');
  expect(await registry.metrics()).toBe('\n');
  const again = metrics({ registry, prefix: 'app_relq_' });
  x = await scrape(again);
  expect(x.value('app_relq_jobs_added_total', { queue: name })).toBeUndefined(); // counting starts afresh
  expect(() => new RelqMetrics({ registry: new Registry(), prefix: 'bad-prefix' })).toThrow(/prefix/);
  expect(() => new RelqMetrics({ registry: new Registry(), waitBuckets: [] })).toThrow(/waitBuckets/);
  expect(() => new RelqMetrics({ registry: new Registry(), bogus: 1 } as never)).toThrow(/bogus/);
});

test('a bad queue, bad buckets or a name the registry already has are refused before any metric is registered', async () => {
  const registry = new Registry();
  const name = uniqueName('checked');
  const q = res.queue<string>(name);
  const refused = (options: ConstructorParameters<typeof RelqMetrics>[0], field: string) => {
    let error: unknown;
    try {
      new RelqMetrics({ registry, ...options });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe(field);
    expect(registry.getMetricsAsArray()).toEqual([]);
  };
  refused({ queues: [q, { name: 'not a queue' } as never] }, 'queues[1]');
  refused({ queues: q as never }, 'queues');
  refused({ waitBuckets: [1, Infinity] }, 'waitBuckets[1]');
  refused({ waitBuckets: [0.5, '1' as never] }, 'waitBuckets[1]');
  refused({ processingBuckets: [1, 1] }, 'processingBuckets[1]');
  refused({ processingBuckets: [2, 1] }, 'processingBuckets[1]');
  refused({ processingBuckets: [0, 1] }, 'processingBuckets[0]');

  const theirs = new Counter({ name: 'relq_jobs_completed_total', help: 'an app metric of the same name', registers: [registry] });
  expect(() => new RelqMetrics({ registry })).toThrow(/registry: already has a metric named 'relq_jobs_completed_total'/);
  expect(registry.getMetricsAsArray().map((m) => m.name)).toEqual(['relq_jobs_completed_total']);
  expect(registry.getSingleMetric('relq_jobs_completed_total')).toBe(theirs);
  registry.removeSingleMetric('relq_jobs_completed_total');

  // the refusals left nothing behind: good options on the same registry work
  const m = metrics({ registry, queues: [q], waitBuckets: [0.1, 1, 10] });
  await q.add('one');
  const x = await scrape(m);
  expect(x.value('relq_jobs_added_total', { queue: name })).toBe(1);
  expect(x.value('relq_queue_jobs', { queue: name, state: 'pending' })).toBe(1);
  // a second RelqMetrics of the same prefix is refused, and the first one keeps its metrics
  const before = registry.getMetricsAsArray().length;
  expect(() => new RelqMetrics({ registry })).toThrow(ValidationError);
  expect(registry.getMetricsAsArray()).toHaveLength(before);
  await q.add('two');
  expect((await scrape(m)).value('relq_jobs_added_total', { queue: name })).toBe(2); // counted once, not by a half-made second
});

test('the oldest pending age also sees jobs waiting in their groups', async () => {
  const m = metrics();
  const name = uniqueName('groups');
  const q = res.queue<string>(name);
  m.watchQueue(q);
  const addedAt = Date.now();
  await q.add('grouped', { group: 'tenant-a' });
  await untilRedisTime(res.client(), addedAt + 1100);
  const x = await scrape(m);
  expect(x.value('relq_queue_jobs', { queue: name, state: 'pending' })).toBe(1);
  expect(x.value('relq_queue_oldest_pending_age_seconds', { queue: name })).toBeGreaterThanOrEqual(1);
});
