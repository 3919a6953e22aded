/**
 * Where a job id appears in a queue's keys (tests only): every index a removal must clear.
 * Read with plain commands, independently of the scripts under test.
 */
import type { Redis } from 'ioredis';
import type { Queue } from '../../lib/index.js';

export async function whereIs(c: Redis, q: Queue<any, any>, id: string): Promise<string[]> {
  const k = q.keys.byName;
  const d = q.keys.derived;
  const found: string[] = [];
  for (const h of ['jobs', 'leases', 'results'] as const) if (await c.hexists(k[h], id)) found.push(h);
  for (const z of ['prio', 'delayed', 'working', 'done', 'dead', 'dedup'] as const) if ((await c.zscore(k[z], id)) !== null) found.push(z);
  if ((await c.zscore(d.deadExpiry, id)) !== null) found.push('deadexp');
  if ((await c.lpos(k.pending, id)) !== null) found.push('pending');
  const groups = new Set([...(await c.smembers(d.groups)), ...(await c.smembers(d.gset))]);
  for (const g of groups) if ((await c.lpos(d.group(g), id)) !== null) found.push(`group:${g}`);
  for (const due of await c.zrange(d.ties, '0', '-1')) if ((await c.lpos(d.tie(Number(due)), id)) !== null) found.push(`tie:${due}`);
  return found;
}

/**
 * The books that must agree with the indexes: grouped pending count (meta gp) against the
 * groups' lists, every non-empty group list in the groups set, nextDue against the delayed set,
 * and a tie list, holding exactly its ids, for every due time that delayed jobs share.
 */
export async function booksAgree(c: Redis, q: Queue<any, any>): Promise<void> {
  const k = q.keys.byName;
  const d = q.keys.derived;
  const groups = await c.smembers(d.groups);
  let grouped = 0;
  for (const g of groups) {
    const n = await c.llen(d.group(g));
    expect(n).toBeGreaterThan(0);
    grouped += n;
  }
  expect(Number((await c.hget(k.meta, 'gp')) ?? 0)).toBe(grouped);
  const [first] = await c.zrange(k.delayed, '0', '0');
  expect(await c.hget(k.meta, 'nextDue')).toBe(first === undefined ? null : await c.zscore(k.delayed, first));
  expect(await c.hlen(k.leases)).toBe(await c.zcard(k.working));
  const byDue = new Map<string, string[]>();
  const flat = await c.zrange(k.delayed, '0', '-1', 'WITHSCORES');
  for (let i = 0; i < flat.length; i += 2) byDue.set(flat[i + 1]!, [...(byDue.get(flat[i + 1]!) ?? []), flat[i]!]);
  const shared = [...byDue].filter(([, ids]) => ids.length > 1).map(([due]) => due);
  const ties = await c.zrange(d.ties, '0', '-1');
  expect(ties.filter((due) => !byDue.has(due))).toEqual([]); // no list outlives its jobs
  for (const due of shared) expect(ties).toContain(due);
  for (const due of ties) expect((await c.lrange(d.tie(Number(due)), '0', '-1')).sort()).toEqual(byDue.get(due)!.sort());
}
