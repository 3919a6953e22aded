// A flow across queues (docs/flows.md, "Flows across queues, and Redis Cluster"), kept running
// by test/examples. The names share the tag {shop}: on Redis Cluster their keys share a slot.
import { Queue, Worker, type FlowNode } from 'relq';

interface Order {
  order: string;
}

export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<{ shipped: string; tree: string[] }> {
  const orders = new Queue<Order, string>('{shop}-orders', { connection: redisUrl });
  const emails = new Queue<Order, string>('{shop}-email', { connection: redisUrl });
  const sms = new Queue<Order, string>('{shop}-sms', { connection: redisUrl });

  // the parent runs in {shop}-orders once its children in the other queues completed;
  // a failed text message does not hold the order back
  const flow = await orders.addFlow({
    data: { order: 'A-17' },
    children: [
      { data: { order: 'A-17' }, queue: '{shop}-email' },
      { data: { order: 'A-17' }, queue: '{shop}-sms', onFailure: 'ignore', opts: { attempts: 1 } },
    ],
  });
  const line = (n: FlowNode): string[] => [`${n.queue} ${n.state}`, ...n.children.flatMap(line)];
  const tree = line((await orders.getFlow(flow.id))!);
  console.log(tree); // [ '{shop}-orders waiting-children', '{shop}-email pending', '{shop}-sms pending' ]

  const workers = [
    new Worker(emails, async (job) => `mailed ${job.data.order}`),
    new Worker(sms, async () => {
      throw new Error('the SMS gateway is down');
    }),
    new Worker(orders, async (job) => `shipped ${job.data.order}`),
  ];
  const shipped = (await orders.waitForResult(flow.id, { timeoutMs: 10_000 }))!;
  console.log(shipped); // shipped A-17

  await Promise.all(workers.map((w) => w.close()));
  await Promise.all([orders, emails, sms].map((q) => q.close()));
  return { shipped, tree };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
