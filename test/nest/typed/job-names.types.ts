/**
 * Compile-time checks of typed job names, run by `npm run typecheck` (tsc compiles test/):
 * every `@ts-expect-error` line must fail to compile, or tsc reports the directive unused.
 * Nothing here runs; test/nest/typed/typed-names.spec.ts runs the same shapes.
 */
import type { Job } from '../../../lib/index.js';
import { NamedQueue, processorFor, WorkerHost, type NamedJob } from '../../../lib/nest/index.js';

interface Charge {
  cents: number;
}
interface Receipt {
  receiptId: string;
}
interface Refund {
  chargeId: string;
}
interface PaymentJobs {
  charge: { data: Charge; result: Receipt };
  refund: { data: Refund };
}

export async function producing(payments: NamedQueue<PaymentJobs>): Promise<void> {
  await payments.add('charge', { cents: 100 });
  await payments.add('refund', { chargeId: 'c1' }, { attempts: 3 });
  await payments.addBulk([
    { name: 'charge', data: { cents: 1 } },
    { name: 'refund', data: { chargeId: 'c2' } },
  ]);
  const receipt: Receipt | undefined = await payments.waitForResult<'charge'>('id');
  void receipt;

  // @ts-expect-error a misspelled name does not compile
  await payments.add('chrage', { cents: 100 });
  // @ts-expect-error another name's data does not compile
  await payments.add('charge', { chargeId: 'c1' });
  // @ts-expect-error the name is the first argument, not an option
  await payments.add('charge', { cents: 1 }, { name: 'refund' });
  // @ts-expect-error a bulk job's data must match its name
  await payments.addBulk([{ name: 'refund', data: { cents: 1 } }]);
}

const P = processorFor<PaymentJobs>();

export class PaymentHandlers {
  @P.Process('charge')
  async charge(job: NamedJob<PaymentJobs, 'charge'>): Promise<Receipt> {
    return { receiptId: `r-${job.data.cents}` };
  }

  @P.Process('refund', { concurrency: 2 })
  refund(job: Job<Refund>): void {
    void job.data.chargeId;
  }

  // @ts-expect-error a misspelled handler name does not compile
  @P.Process('refnud')
  misspelled(job: Job<Refund>): void {
    void job;
  }

  // @ts-expect-error a handler taking another name's data does not compile
  @P.Process('charge')
  wrongData(job: Job<Refund>): Receipt {
    return { receiptId: job.data.chargeId };
  }

  // @ts-expect-error a handler returning something else than the name's result does not compile
  @P.Process('charge')
  wrongResult(job: Job<Charge>): number {
    return job.data.cents;
  }
}

/** A WorkerHost typed by the map: `switch (job.name)` narrows `job.data`. */
export class PaymentHost extends WorkerHost<NamedJob<PaymentJobs>> {
  process(job: NamedJob<PaymentJobs>): string {
    switch (job.name) {
      case 'charge':
        return `charge ${job.data.cents}`;
      case 'refund':
        return `refund ${job.data.chargeId}`;
      // @ts-expect-error no such name in the map
      case 'payout':
        return 'never';
    }
  }
}
