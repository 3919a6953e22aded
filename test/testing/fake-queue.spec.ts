/**
 * FakeQueue: the adds of a Queue recorded in memory, checked by the queue's own validators, and
 * drain() running them through a handler. Its type fits wherever a QueueProducer is asked for.
 */
import { FlowJobExistsError, PayloadTooLargeError, Queue, ValidationError, type QueueProducer } from 'relq';
import { Test } from '@nestjs/testing';
import { getQueueToken } from 'relq/nest';
import { createFakeQueue, FakeQueue, provideFakeQueue } from 'relq/testing';
import { DEFAULT_POLICY } from '../../lib/core/defaults.js';
import type { EmailJob, EmailReceipt } from './emails/email.types.js';
import { EmailsService } from './emails/emails.service.js';

interface Email {
  to: string;
}

test('records each add with its id, name, data, options and policy', async () => {
  const q = createFakeQueue<Email, string>('emails', { defaults: { job: { attempts: 2 } } });
  const a = await q.add({ to: 'a@x' });
  const b = await q.tryAdd({ to: 'b@x' }, { name: 'welcome', priority: 5, backoff: 100 });
  const bulk = await q.addBulk([{ data: { to: 'c@x' } }, { data: { to: 'd@x' }, opts: { group: 'g1', delayMs: 10 } }]);
  await q.tryAddBulk([{ data: { to: 'e@x' } }]);
  expect(a.created && b.created && bulk.every((r) => r.created)).toBe(true);
  expect(new Set([a.id, b.id, bulk[0]!.id, bulk[1]!.id]).size).toBe(4);
  expect(q.added.map((j) => [j.data.to, j.via, j.name])).toEqual([
    ['a@x', 'add', ''],
    ['b@x', 'tryAdd', 'welcome'],
    ['c@x', 'addBulk', ''],
    ['d@x', 'addBulk', ''],
    ['e@x', 'tryAddBulk', ''],
  ]);
  expect(q.added[0]).toMatchObject({ id: a.id, policy: { ...DEFAULT_POLICY, attempts: 2, dedupWindowMs: 0 } });
  expect(q.added[0]!.opts).toBeUndefined();
  expect(q.added[1]).toMatchObject({ priority: 5, policy: { attempts: 2, backoff: { type: 'fixed', delayMs: 100 } } });
  expect(q.added[3]).toMatchObject({ group: 'g1', opts: { group: 'g1', delayMs: 10 } });
});

test('a jobId that was added is a duplicate: nothing recorded, created false', async () => {
  const q = createFakeQueue<Email>('emails');
  expect(await q.add({ to: 'a@x' }, { jobId: 'k1' })).toEqual({ id: 'k1', created: true });
  expect(await q.add({ to: 'other' }, { jobId: 'k1' })).toEqual({ id: 'k1', created: false });
  expect(await q.addBulk([{ data: { to: 'b@x' }, opts: { jobId: 'k1' } }, { data: { to: 'c@x' }, opts: { jobId: 'k2' } }])).toEqual([
    { id: 'k1', created: false },
    { id: 'k2', created: true },
  ]);
  expect(q.added.map((j) => j.data.to)).toEqual(['a@x', 'c@x']);
  q.clear();
  expect(await q.add({ to: 'again' }, { jobId: 'k1' })).toEqual({ id: 'k1', created: true });
});

test('bad data or options are refused before anything is recorded, as a Queue refuses them', async () => {
  const q = createFakeQueue<unknown>('emails');
  await expect(q.add({ to: 'a' }, { priority: 5000 })).rejects.toThrow(/opts\.priority/);
  await expect(q.add({ to: 'a' }, { atempts: 3 } as never)).rejects.toThrow(ValidationError);
  await expect(q.add({ n: 1n })).rejects.toThrow(ValidationError);
  await expect(q.add('x'.repeat(2 * 1024 * 1024))).rejects.toThrow(PayloadTooLargeError);
  await expect(q.addBulk([{ data: 1 }, { data: 2, opts: { group: 'g', priority: 1 } }])).rejects.toThrow(/jobs\[1\]\.opts/);
  await expect(q.addBulk([{ data: 1 }], { wait: 5 } as never)).rejects.toThrow(/addBulk options/);
  expect(q.added).toEqual([]);
  expect(() => createFakeQueue('bad{name')).toThrow(ValidationError);
  // defaults have registerQueue's shape, checked by the same validator
  expect(() => createFakeQueue('emails', { defaults: { attempts: 2 } } as never)).toThrow("defaults: unknown option 'attempts' (known: job, processor)");
  expect(() => createFakeQueue('emails', { defaults: { job: { attempts: 0 } } })).toThrow(/defaults\.job\.attempts/);
});

test('drain() runs pending jobs once, in order, and reports results and failures', async () => {
  const q = createFakeQueue<Email, string>('emails');
  await q.add({ to: 'a@x' });
  await q.add({ to: 'fail@x' }, { name: 'welcome', attempts: 4 });
  await q.add({ to: 'c@x' });
  const boom = new Error('smtp down');
  const drained = await q.drain(async (job) => {
    if (job.data.to.startsWith('fail')) throw boom;
    await job.log(`sent ${job.data.to}`);
    return `sent:${job.data.to}`;
  });
  expect(drained.map((d) => [d.job.data.to, d.status])).toEqual([
    ['a@x', 'completed'],
    ['fail@x', 'failed'],
    ['c@x', 'completed'],
  ]);
  expect(drained[0]).toMatchObject({ result: 'sent:a@x' });
  expect(drained[0]!.job.logs).toEqual(['sent a@x']);
  expect(drained[1]).toMatchObject({ error: boom });
  expect(drained[1]!.job).toMatchObject({ name: 'welcome', maxAttempts: 4, attempt: 1 });
  expect(q.pending).toEqual([]);
  expect(await q.drain(() => 'again')).toEqual([]); // each job runs once
  expect(q.added).toHaveLength(3);
});

test('addFlow records the tree; drain runs children first and the parent reads their results', async () => {
  const q = createFakeQueue<string, string>('reports');
  const flow = await q.addFlow({
    data: 'report',
    opts: { name: 'merge' },
    children: [{ data: 'part-1', children: [{ data: 'part-1a' }] }, { data: 'part-2', opts: { jobId: 'p2' } }],
  });
  expect(flow.created).toBe(true);
  expect(flow.children.map((c) => c.id)).toContain('p2');
  const [root, c1, c1a, c2] = q.added;
  expect([root!.data, c1!.data, c1a!.data, c2!.data]).toEqual(['report', 'part-1', 'part-1a', 'part-2']);
  expect([c1!.parentId, c1a!.parentId, c2!.parentId]).toEqual([root!.id, c1!.id, root!.id]);
  expect(q.added.every((j) => j.via === 'addFlow')).toBe(true);
  expect(root!.opts).toEqual({ name: 'merge' });

  const drained = await q.drain(async (job) => {
    const kids = await job.childrenResults<string>();
    return `${job.data}(${Object.values(kids).sort().join(',')})`;
  });
  expect(drained.map((d) => d.job.data)).toEqual(['part-1a', 'part-1', 'part-2', 'report']);
  expect(drained.at(-1)).toMatchObject({ status: 'completed', result: 'report(part-1(part-1a()),part-2())' });

  // the root's jobId makes the whole flow a duplicate; a child's jobId that exists refuses it
  expect((await q.addFlow({ data: 'again', opts: { jobId: 'r1' } })).created).toBe(true);
  const count = q.added.length;
  expect(await q.addFlow({ data: 'x', opts: { jobId: 'r1' }, children: [{ data: 'y' }] })).toMatchObject({ id: 'r1', created: false, children: [{ created: false }] });
  await expect(q.addFlow({ data: 'x', children: [{ data: 'y', opts: { jobId: 'p2' } }] })).rejects.toThrow(FlowJobExistsError);
  await expect(q.addFlow({ data: 'x', children: [{ data: 'y', queue: 'other' }] })).rejects.toThrow('a fake queue records the jobs of its own queue only');
  expect(q.added).toHaveLength(count);
});

test('types: a FakeQueue is a QueueProducer, as a Queue is; a Nest provider swaps it in', () => {
  const fake = createFakeQueue<Email>('emails');
  const asProducer: QueueProducer<Email> = fake;
  const queueIsProducer: Queue<Email, string> extends QueueProducer<Email> ? true : false = true;
  // @ts-expect-error a Queue has private state: a QueueProducer (or Nest's untyped useValue) takes the fake, a Queue<Email> does not
  const asQueue: Queue<Email> = fake;
  expect([asProducer, asQueue, queueIsProducer]).toEqual([fake, fake, true]);
  expect(provideFakeQueue(fake)).toEqual({ provide: getQueueToken('emails'), useValue: fake });
  expect(fake).toBeInstanceOf(FakeQueue);
});

test('provideFakeQueue: a testing module without QueueModule injects the fake where @InjectQueue asks', async () => {
  const emails = createFakeQueue<EmailJob, EmailReceipt>('emails');
  const moduleRef = await Test.createTestingModule({ providers: [EmailsService, provideFakeQueue(emails)] }).compile();
  try {
    await moduleRef.get(EmailsService).welcome('bob@example.com');
    expect(emails.added.map((j) => [j.id, j.data])).toEqual([['welcome:bob@example.com', { to: 'bob@example.com', subject: 'Welcome' }]]);
  } finally {
    await moduleRef.close();
  }
});
