/**
 * Compile-time checks of flows' typing, run by `npm run typecheck` (tsc compiles test/): every
 * `@ts-expect-error` line must fail to compile, or tsc reports the directive unused. Nothing
 * here runs; test/flows/cross-queue.spec.ts and runtime-children.spec.ts run the same shapes.
 */
import type { Job, Lease, Queue } from '../../lib/index.js';

interface Order {
  orderId: string;
}
interface Email {
  to: string;
}

export async function flows(orders: Queue<Order>, lease: Lease<Order>, job: Job<Order>): Promise<void> {
  // a child in the parent's queue carries its data; one in another queue, that queue's
  await orders.addFlow({
    data: { orderId: 'o1' },
    children: [{ data: { orderId: 'o2' } }, { data: { to: 'a@b.c' } satisfies Email, queue: '{shop}-email', children: [{ data: 42, queue: '{shop}-audit' }] }],
  });
  // @ts-expect-error a child of the parent's queue with another queue's data
  await orders.addFlow({ data: { orderId: 'o1' }, children: [{ data: { to: 'a@b.c' } }] });
  await orders.addChildren(lease, [{ data: { orderId: 'o3' } }, { data: { to: 'x' }, queue: '{shop}-email' }]);
  // @ts-expect-error the same through a lease
  await orders.addChildren(lease, [{ data: { to: 'x' } }]);
  // a handler names its children's data
  await job.addChildren<Email>([{ data: { to: 'y' }, queue: '{shop}-email' }]);
  // @ts-expect-error not an Email
  await job.addChildren<Email>([{ data: { orderId: 'o4' }, queue: '{shop}-email' }]);
  const parent: { readonly id: string; readonly queue: string } | undefined = job.parent;
  void parent;
}
