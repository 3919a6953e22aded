/**
 * The registry of queue names: listQueues() lists a prefix's queues without KEYS or SCAN,
 * from the first creating call of any Queue object until deleteQueue(); reads never list a
 * queue, and adds after a Queue object's first cost no registry call.
 */
import { ConnectionError, listQueues, ValidationError } from '../../lib/index.js';
import { closedPort } from './_cli.js';
import { commandStats, redisNow, scriptCalls, statsDelta, useRedis } from '../core/_helpers.js';
import { uniquePrefix } from '../support/redis.js';
import { README_ACL_PASSWORD, readmeAclLine, runAclLine } from '../support/acl.js';

const res = useRedis();

const names = async (prefix: string): Promise<string[]> => (await listQueues(res.server.url, { prefix })).map((q) => q.name);

test('each creating call lists its queue, with its first-seen time on the Redis clock', async () => {
  const prefix = uniquePrefix();
  const opts = { prefix };
  const before = await redisNow(res.client());
  await res.queue('a-add', opts).add('x');
  await res.queue('b-bulk', opts).addBulk([{ data: 1 }, { data: 2 }]);
  await res.queue('c-flow', opts).addFlow({ data: 'parent', children: [{ data: 'child' }] });
  await res.queue('d-sched', opts).upsertScheduler('tick', { everyMs: 60_000 });
  await res.queue('e-pause', opts).pause();
  await res.queue('f-bound', { ...opts, bound: 5 }).tryAdd('y');
  await res.queue('g-close', opts).closeQueue();
  const listed = await listQueues(res.server.url, { prefix });
  expect(listed.map((q) => q.name)).toEqual(['a-add', 'b-bulk', 'c-flow', 'd-sched', 'e-pause', 'f-bound', 'g-close']);
  const after = await redisNow(res.client());
  for (const q of listed) {
    expect(q.firstSeen).toBeGreaterThanOrEqual(before);
    expect(q.firstSeen).toBeLessThanOrEqual(after);
  }
});

test('reads, leases and settles never list a queue', async () => {
  const prefix = uniquePrefix();
  const q = res.queue('ghost', { prefix });
  await q.getJob('nope');
  await q.counts();
  await q.getJobs('pending');
  await q.lease({ count: 1 });
  await q.listDead();
  await q.sweep();
  expect(await names(prefix)).toEqual([]);
});

test('a queue keeps its first-seen time; adds after the first cost no registry call', async () => {
  const prefix = uniquePrefix();
  const first = res.queue('steady', { prefix });
  await first.add('one');
  const [entry] = await listQueues(res.server.url, { prefix });
  const obs = res.client();
  const stats = await commandStats(obs);
  for (let i = 0; i < 20; i++) await first.add(i);
  // twenty adds on the plain path: twenty script calls, not one more
  expect(scriptCalls(statsDelta(stats, await commandStats(obs)))).toBe(20);
  await res.twin(first).add('from another object');
  expect(await listQueues(res.server.url, { prefix })).toEqual([entry]);
});

test('deleteQueue unlists the queue; the next write of the same object lists it again', async () => {
  const prefix = uniquePrefix();
  const keep = res.queue('keep', { prefix });
  const gone = res.queue('gone', { prefix });
  await keep.add(1);
  await gone.add(1);
  expect(await names(prefix)).toEqual(['gone', 'keep']);
  await gone.deleteQueue({ tombstoneMs: 1 });
  expect(await names(prefix)).toEqual(['keep']);
  await gone.add(2);
  expect(await names(prefix)).toEqual(['gone', 'keep']);
});

test('prefixes are separate; a client passed in stays open', async () => {
  const [p1, p2] = [uniquePrefix(), uniquePrefix()];
  await res.queue('one', { prefix: p1 }).add(1);
  await res.queue('two', { prefix: p2 }).add(1);
  const client = res.client();
  expect((await listQueues(client, { prefix: p1 })).map((q) => q.name)).toEqual(['one']);
  expect((await listQueues(client, { prefix: p2 })).map((q) => q.name)).toEqual(['two']);
  expect(await client.ping()).toBe('PONG');
});

test("the README's least-privilege ACL user registers and lists the queues of its prefix", async () => {
  await runAclLine(res.client(), readmeAclLine()); // user relq-app, keys ~{myapp:*
  const url = `redis://relq-app:${README_ACL_PASSWORD}@${res.server.host}:${res.server.port}`;
  const name = `acl-${uniquePrefix()}`;
  await res.queue(name, { connection: url, prefix: 'myapp' }).add('x');
  expect((await listQueues(url, { prefix: 'myapp' })).map((q) => q.name)).toContain(name);
});

test('bad options are refused before connecting; an unreachable Redis is a ConnectionError', async () => {
  await expect(listQueues(res.server.url, { prefix: 'a:b' })).rejects.toThrow(ValidationError);
  await expect(listQueues(res.server.url, { prefx: 'x' } as never)).rejects.toThrow(ValidationError);
  await expect(listQueues(`redis://127.0.0.1:${await closedPort()}`)).rejects.toThrow(ConnectionError);
});
