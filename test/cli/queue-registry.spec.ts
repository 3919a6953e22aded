/**
 * The registry of queue names: listQueues() lists a prefix's queues without KEYS or SCAN,
 * from the first creating call of any Queue object until deleteQueue(); reads never list a
 * queue, and adds after a Queue object's first cost no registry call. An ACL user that may
 * not write the registry still produces and consumes, with one warning; other registry
 * failures fail the call.
 */
import { ConnectionError, listQueues, PartitionedQueue, QueueDeletedError, RelqError, ValidationError, type RelqWarning } from '../../lib/index.js';
import { isListed, Registration } from '../../lib/core/registry/registry.js';
import { registerQueueScript, type RegistryArgs, type RegistryScript } from '../../lib/core/registry/scripts.js';
import { runScript } from '../../lib/core/redis/scripts.js';
import { waitUntil } from '../support/wait.js';
import { closedPort } from '../support/cli-harness.js';
import { commandStats, redisNow, scriptCalls, statsDelta, untilRedisTime, useRedis } from '../support/engine-harness.js';
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

test("a call that a deleted queue's tombstone refuses leaves the queue unlisted; the first creating call after the tombstone lists it", async () => {
  const prefix = uniquePrefix();
  const gone = res.queue('gone', { prefix });
  await gone.add(1);
  await gone.deleteQueue({ tombstoneMs: 60_000 });
  // other processes' objects that never registered this queue: their first creating call registers it
  await expect(res.twin(gone).add(2)).rejects.toBeInstanceOf(QueueDeletedError);
  await expect(res.twin(gone).closeQueue()).rejects.toBeInstanceOf(QueueDeletedError);
  await expect(res.twin(gone).addFlow({ data: 'p', children: [{ data: 'c' }] })).rejects.toBeInstanceOf(QueueDeletedError);
  expect(await names(prefix)).toEqual([]);
  const late = res.twin(gone);
  await expect(late.add(3)).rejects.toBeInstanceOf(QueueDeletedError);
  await res.client().del(gone.keys.byName.meta); // the tombstone ends (it would after tombstoneMs)
  await late.add(4);
  expect(await names(prefix)).toEqual(['gone']);
});

test('deleteQueue while a registration is in flight: the queue is unlisted, and the next creating call lists it again', async () => {
  const prefix = uniquePrefix();
  const client = res.client();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  // the registering call reaches Redis at once; its reply is held back until released
  const exec = async (script: RegistryScript, keys: string[], args: RegistryArgs): Promise<unknown> => {
    const reply = await runScript(client, script.name, keys, script.encode(args));
    if (script === registerQueueScript) await held;
    return reply;
  };
  const registration = new Registration('raced', prefix, exec, () => undefined);
  const registering = registration.before();
  await waitUntil(async () => (await names(prefix)).length === 1, 'the registering call applied', 5000);
  const removing = registration.remove();
  release();
  await Promise.all([registering, removing]);
  expect(await names(prefix)).toEqual([]);
  const again = registration.before();
  expect(again).toBeDefined();
  await again;
  expect(await names(prefix)).toEqual(['raced']);
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

test('isListed answers for one name (the CLI\'s existence check); bad input is refused before connecting', async () => {
  const prefix = uniquePrefix();
  await res.queue('here', { prefix }).add(1);
  const client = res.client();
  expect(await isListed(client, 'here', { prefix })).toBe(true);
  expect(await isListed(client, 'absent', { prefix })).toBe(false);
  expect(await isListed(client, 'here', { prefix: uniquePrefix() })).toBe(false);
  await expect(isListed(`redis://127.0.0.1:${await closedPort()}`, 'here', { prefix: 'a:b' })).rejects.toThrow(ValidationError);
  await expect(isListed(`redis://127.0.0.1:${await closedPort()}`, '', { prefix })).rejects.toThrow(ValidationError);
});

const aclUrl = (user: string) => `redis://${user}:${README_ACL_PASSWORD}@${res.server.host}:${res.server.port}`;

test("the README's least-privilege ACL user registers and lists the queues of its prefix", async () => {
  await runAclLine(res.client(), readmeAclLine()); // user relq-app, keys ~{myapp:*
  const url = aclUrl('relq-app');
  const name = `acl-${uniquePrefix()}`;
  const warnings: RelqWarning[] = [];
  await res.queue(name, { connection: url, prefix: 'myapp', onWarning: (w) => warnings.push(w) }).add('x');
  expect((await listQueues(url, { prefix: 'myapp' })).map((q) => q.name)).toContain(name);
  expect(await isListed(url, name, { prefix: 'myapp' })).toBe(true);
  expect(warnings).toEqual([]);
});

test('an ACL user allowed only its queue\'s hash tag produces and consumes; one warning names the registry key; the queue is not listed', async () => {
  const prefix = uniquePrefix();
  const name = 'emails';
  const user = `relq-${prefix}`;
  const registry = `{${prefix}:}:queues`;
  // the README's line, with its command list, narrowed from the prefix to one queue's hash tag
  const line = readmeAclLine().replace('relq-app', user).replaceAll('{myapp:*', `{${prefix}:${name}}*`);
  const admin = res.client();
  await runAclLine(admin, line);
  const warnings: RelqWarning[] = [];
  const q = res.queue<number>(name, { connection: aclUrl(user), prefix, onWarning: (w) => warnings.push(w) });

  await q.add(1);
  await q.addBulk([{ data: 2 }, { data: 3 }]);
  for (let i = 4; i <= 20; i++) await q.add(i);
  const leased = await q.lease({ count: 20 });
  expect(leased.map((l) => l.job.data).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  for (const l of leased) expect(await q.ack(l)).toBe(true);
  expect(await q.counts()).toMatchObject({ pending: 0, working: 0 });

  expect(warnings).toEqual([{ code: 'RELQ_REGISTRY_NOPERM', queue: name, message: expect.stringContaining(registry) }]);
  expect(warnings[0]!.message).toContain(`~${registry}`);
  expect(warnings[0]!.message).not.toContain(README_ACL_PASSWORD);
  expect(await names(prefix)).toEqual([]);
  // the refusal counts as a registration: 20 creating calls, one refused registry call
  const refusals = ((await admin.call('ACL', 'LOG')) as unknown[][])
    .map((entry) => Object.fromEntries(Array.from({ length: entry.length / 2 }, (_, i) => [entry[2 * i], entry[2 * i + 1]])))
    .filter((e) => e.username === user && e.object === registry);
  expect(refusals).toMatchObject([{ reason: 'key', count: 1 }]);

  // deleteQueue succeeds though its unregister step is refused too; still one warning
  await q.add(21);
  expect(await q.deleteQueue({ tombstoneMs: 1 })).toBeGreaterThan(0);
  const deletedAt = await redisNow(res.client());
  expect(warnings).toHaveLength(1);
  // a fresh object that only deletes warns once, about the unlisting; it deletes after the
  // 1 ms tombstone is gone, else its count would hold the tombstone's keys
  await untilRedisTime(res.client(), deletedAt + 1, 'the tombstone to expire');
  const other: RelqWarning[] = [];
  await expect(res.twin(q, { connection: aclUrl(user), onWarning: (w) => other.push(w) }).deleteQueue({ tombstoneMs: 1 })).resolves.toBe(0);
  expect(other).toEqual([{ code: 'RELQ_REGISTRY_NOPERM', queue: name, message: expect.stringMatching(/could not be removed from .* may still show it/) }]);
});

test('a partitioned queue is listed once, with its number; what else is written beside the registry is left out', async () => {
  const prefix = uniquePrefix();
  const clicks = new PartitionedQueue<number>('clicks', { connection: res.server.url, prefix, partitions: 4 });
  try {
    await clicks.add(1);
    await res.queue('plain', { prefix }).add(1);
    expect(await listQueues(res.server.url, { prefix })).toEqual([
      { name: 'clicks', firstSeen: expect.any(Number), partitions: 4 },
      { name: 'plain', firstSeen: expect.any(Number) },
    ]);
    // another client of the same Redis writes what is not a count: listed without one
    await res.client().hset(`{${prefix}:}:partitioned`, 'plain', '4\u001b[2J', 'clicks', '99999');
    expect((await listQueues(res.server.url, { prefix })).map((l) => l.partitions)).toEqual([undefined, undefined]);
    // a user allowed the registry alone still lists the queues
    const user = `reg-${prefix}`;
    await res.client().call('ACL', 'SETUSER', user, 'on', `>${README_ACL_PASSWORD}`, `~{${prefix}:}:queues`, '+@all');
    expect(await names(prefix)).toEqual(['clicks', 'plain']);
    expect((await listQueues(aclUrl(user), { prefix })).map((l) => l.name)).toEqual(['clicks', 'plain']);
    await clicks.deleteQueue({ tombstoneMs: 1 });
    expect(await names(prefix)).toEqual(['plain']);
  } finally {
    await clicks.close();
  }
});

test('a registry failure other than a refused key fails the creating call, and the next call registers again', async () => {
  const prefix = uniquePrefix();
  const admin = res.client();
  await admin.set(`{${prefix}:}:queues`, 'not a sorted set');
  const warnings: RelqWarning[] = [];
  const q = res.queue('q', { prefix, onWarning: (w) => warnings.push(w) });
  const err = (await q.add('x').catch((e: unknown) => e)) as RelqError;
  expect(err).toBeInstanceOf(RelqError);
  expect(err).toMatchObject({ code: 'RELQ_REDIS' });
  expect(err.message).toMatch(/^relq add: .*WRONGTYPE/);
  expect(await q.counts()).toMatchObject({ pending: 0 });
  await admin.del(`{${prefix}:}:queues`);
  await q.add('y');
  expect(await names(prefix)).toEqual(['q']);
  expect(warnings).toEqual([]);
});

test('bad options are refused before connecting; an unreachable Redis is a ConnectionError', async () => {
  await expect(listQueues(res.server.url, { prefix: 'a:b' })).rejects.toThrow(ValidationError);
  await expect(listQueues(res.server.url, { prefx: 'x' } as never)).rejects.toThrow(ValidationError);
  await expect(listQueues(`redis://127.0.0.1:${await closedPort()}`)).rejects.toThrow(ConnectionError);
});
