/**
 * Producers and consumers run against `redis` while it is killed (-9) and restarted on the
 * same port and data dir; then every add and ack that returned before the kill is read
 * back. Used by the AOF test and by `npm run chaos -- --durability` (which measures
 * everysec and no persistence too).
 */
import { Queue } from '../../lib/index.js';
import { uniquePrefix, type TestRedis } from './redis.js';
import { waitUntil } from './wait.js';

export interface KillResult {
  /** A new server process answered after the kill. */
  restarted: boolean;
  confirmedAdds: number;
  confirmedAcks: number;
  /** Confirmed adds whose job is gone after the restart. */
  lostAdds: string[];
  /** Confirmed acks whose job is not completed after the restart. */
  lostAcks: string[];
}

export async function killMidStream(redis: TestRedis, opts: { addsBefore?: number } = {}): Promise<KillResult> {
  const prefix = uniquePrefix();
  const producer = new Queue<number>('kill', { connection: redis.url, prefix });
  const consumer = new Queue<number>('kill', { connection: redis.url, prefix });
  const added = new Set<string>();
  const acked = new Set<string>();
  let stop = false;
  const pause = () => new Promise((r) => setTimeout(r, 20));
  const produce = async (lane: number) => {
    for (let i = 0; !stop; i++) {
      const jobId = `p${lane}-${i}`;
      // A call that fails (Redis down past ioredis's retries) is in doubt: never counted.
      await producer.add(i, { jobId }).then(() => added.add(jobId), pause);
    }
  };
  const consume = async () => {
    while (!stop) {
      await consumer
        .lease({ count: 5, blockMs: 50 })
        .then(async (leases) => (await consumer.ackBatch(leases)).forEach((ok, i) => ok && acked.add(leases[i]!.job.id)))
        .catch(pause);
    }
  };
  try {
    const loops = [produce(0), produce(1), produce(2), consume(), consume()];
    const runId = async () => /run_id:(\w+)/.exec(await producer.client.info('server'))![1];
    await waitUntil(() => added.size >= (opts.addsBefore ?? 300) && acked.size >= 100, 'traffic before the kill', 20_000);
    const before = await runId();
    await redis.kill();
    const confirmedAdds = [...added];
    const confirmedAcks = [...acked];
    await redis.restart();
    await waitUntil(() => added.size > confirmedAdds.length + 100, 'traffic after the restart', 20_000);
    stop = true;
    await Promise.all(loops);
    const lostAdds: string[] = [];
    const lostAcks: string[] = [];
    for (const id of confirmedAdds) if (!(await producer.getJob(id))) lostAdds.push(id);
    for (const id of confirmedAcks) if ((await producer.getJob(id))?.state !== 'completed') lostAcks.push(id);
    return { restarted: (await runId()) !== before, confirmedAdds: confirmedAdds.length, confirmedAcks: confirmedAcks.length, lostAdds, lostAcks };
  } finally {
    stop = true;
    await Promise.all([producer.close(), consumer.close()]);
  }
}
