/**
 * Worker and BatchWorker report a last attempt's failure at the same point: after its settle
 * answered. A failure whose lease was lost meanwhile (swept and taken by another consumer) is
 * reported 'lost' only, never 'failed' or 'dead': nothing this worker did happened to the job.
 */
import { BatchWorker, Worker, type WorkerEvent } from '../../lib/index.js';
import { useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

type Make = (q: ReturnType<typeof res.queue<number, string>>, handlerGate: Promise<void>) => Worker<number, string> | BatchWorker<number, string>;

const makers: Record<string, Make> = {
  Worker: (q, gate) =>
    new Worker<number, string>(q, async () => {
      await gate;
      throw new Error('too late');
    }, { leaseMs: 300, heartbeat: false, blockMs: 200 }),
  BatchWorker: (q, gate) =>
    new BatchWorker<number, string>(q, async (jobs) => {
      await gate;
      return jobs.map(() => ({ ok: false as const, error: new Error('too late') }));
    }, { size: 1, leaseMs: 300, heartbeat: false, blockMs: 200 }),
};

describe.each(Object.keys(makers))('%s', (kind) => {
  test('a last attempt that fails after its lease was lost is reported lost, not failed', async () => {
    const q = res.queue<number, string>();
    const other = res.twin<number, string>(q);
    const { id } = await q.add(1, { attempts: 1 });
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const events: Array<WorkerEvent<number, string>> = [];
    const w = makers[kind]!(q, gate);
    res.worker(w as Worker<number, string>);
    w.events.subscribe((e) => e.type !== 'drained' && events.push(e)); // its job's, not the loop's
    await waitUntil(async () => (await q.getJob(id))?.state === 'working', 'the worker to lease the job');

    // The lease expires (no heartbeat): a sweep counts the failed attempt, the job's last,
    // and dead-letters it. The handler's own failure comes after that.
    await waitUntil(async () => {
      await other.sweep();
      return (await other.getJob(id))?.state === 'dead';
    }, 'the expired lease to be swept');

    open();
    await waitUntil(() => events.some((e) => e.type === 'lost'), 'the lost report');
    expect(events.map((e) => e.type)).toEqual(['lost']);
    expect(await other.getJob(id)).toMatchObject({ state: 'dead', failures: 1 });
  });

  test("a last attempt's failure is reported failed, then dead", async () => {
    const q = res.queue<number, string>();
    const { id } = await q.add(1, { attempts: 1 });
    const events: Array<WorkerEvent<number, string>> = [];
    const w = makers[kind]!(q, Promise.resolve());
    res.worker(w as Worker<number, string>);
    w.events.subscribe((e) => e.type !== 'drained' && events.push(e)); // its job's, not the loop's
    await waitUntil(() => events.some((e) => e.type === 'dead'), 'the dead report');
    expect(events.map((e) => [e.type, 'willRetry' in e ? e.willRetry : undefined])).toEqual([
      ['failed', false],
      ['dead', undefined],
    ]);
    expect(await q.getJob(id)).toMatchObject({ state: 'dead', lastError: 'Error: too late' });
  });
});
