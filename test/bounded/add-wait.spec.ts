/**
 * A job's own `waitMs` (how long an add waits for room) means something only for add():
 * addBulk takes one for the whole call and the try variants never wait, so a per-job value
 * there is refused before anything is written, never accepted and ignored.
 */
import { QueueFullError, ValidationError } from '../../lib/index.js';
import { scanKeys, useRedis } from '../support/engine-harness.js';

const res = useRedis();

test('add() honours its own waitMs on a full bounded queue', async () => {
  const q = res.queue<number>('bounded', { bound: 1 });
  await q.add(1);
  const t0 = Date.now();
  await expect(q.add(2, { waitMs: 300 })).rejects.toBeInstanceOf(QueueFullError);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
});

test('addBulk / tryAdd / tryAddBulk refuse a per-job waitMs with a ValidationError naming it, writing nothing', async () => {
  const q = res.queue<number>('bounded', { bound: 10 });
  const obs = res.client();
  const cases: Array<[string, () => Promise<unknown>, RegExp]> = [
    ['addBulk', () => q.addBulk([{ data: 1 }, { data: 2, opts: { waitMs: 100 } }]), /jobs\[1\]\.opts\.waitMs.*addBulk\(jobs, \{ waitMs \}\)/],
    ['tryAdd', () => q.tryAdd(1, { waitMs: 100 }), /opts\.waitMs.*tryAdd never waits/],
    ['tryAddBulk', () => q.tryAddBulk([{ data: 1, opts: { waitMs: 100 } }]), /jobs\[0\]\.opts\.waitMs.*tryAddBulk never waits/],
  ];
  for (const [what, call, message] of cases) {
    const err = await call().then(
      () => new Error(`${what} was accepted`),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(message);
  }
  expect(await scanKeys(obs, `${q.prefix}*`)).toEqual([]);
  // the call-wide option is the way
  expect(await q.addBulk([{ data: 1 }, { data: 2 }], { waitMs: 100 })).toHaveLength(2);
});
