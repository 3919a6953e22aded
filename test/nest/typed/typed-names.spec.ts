/**
 * Typed job names at run time: a NamedQueue adds by name (BullMQ's argument order), the
 * handlers of processorFor<M>().Process(name) take their names, and a WorkerHost's
 * process(job) is the default handler. Compile-time checks: job-names.types.ts.
 */
import { Injectable, Module } from '@nestjs/common';
import {
  getNamedQueueToken,
  InjectNamedQueue,
  NamedQueue,
  Process,
  Processor,
  processorFor,
  QueueModule,
  WorkerHost,
  type Job,
  type NamedJob,
} from '../../../lib/nest/index.js';
import { ValidationError } from '../../../lib/index.js';
import { uniquePrefix } from '../../support/redis.js';
import { useApps } from '../app-bed.js';

const bed = useApps();

interface PaymentJobs {
  charge: { data: { cents: number }; result: string };
  refund: { data: { chargeId: string }; result: string };
}

function root() {
  return QueueModule.forRoot({ connection: bed.redis.url, prefix: uniquePrefix(), defaults: { processor: { blockMs: 200 } }, shutdown: { drainTimeoutMs: 200 } });
}

@Injectable()
class Payments {
  constructor(@InjectNamedQueue('payments') readonly queue: NamedQueue<PaymentJobs>) {}
}

test('named adds reach the processorFor handlers of their names', async () => {
  const P = processorFor<PaymentJobs>();

  @Processor('payments')
  class PaymentProcessor {
    @P.Process('charge')
    charge(job: NamedJob<PaymentJobs, 'charge'>): string {
      return `charged ${job.data.cents} as ${job.name}`;
    }

    @P.Process('refund')
    async refund(job: NamedJob<PaymentJobs, 'refund'>): Promise<string> {
      return `refunded ${job.data.chargeId} as ${job.name}`;
    }
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'payments', defaults: { job: { keepCompletedMs: 60_000 } } })], providers: [PaymentProcessor, Payments] })
  class PaymentsModule {}

  const app = await bed.start(root(), PaymentsModule);
  const payments = app.get(Payments).queue;
  expect(payments.name).toBe('payments');
  const charge = await payments.add('charge', { cents: 250 });
  const [refund, second] = await payments.addBulk([
    { name: 'refund', data: { chargeId: charge.id } },
    { name: 'charge', data: { cents: 5 } },
  ]);
  expect(await payments.waitForResult<'charge'>(charge.id, { timeoutMs: 5000 })).toBe('charged 250 as charge');
  expect(await payments.waitForResult<'refund'>(refund!.id, { timeoutMs: 5000 })).toBe(`refunded ${charge.id} as refund`);
  expect(await payments.waitForResult(second!.id, { timeoutMs: 5000 })).toBe('charged 5 as charge');
  expect((await payments.queue.getJob(charge.id))?.name).toBe('charge');
});

test("a WorkerHost's process(job) takes every name no @Process('name') method takes", async () => {
  @Processor('host')
  class HostProcessor extends WorkerHost<NamedJob<PaymentJobs>> {
    process(job: NamedJob<PaymentJobs>): string {
      switch (job.name) {
        case 'charge':
          return `host charged ${job.data.cents}`;
        case 'refund':
          return `host refunded ${job.data.chargeId}`;
      }
    }

    @Process('refund')
    refund(job: Job<{ chargeId: string }>): string {
      return `named refund ${job.data.chargeId}`;
    }
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'host', defaults: { job: { keepCompletedMs: 60_000 } } })], providers: [HostProcessor] })
  class HostModule {}

  const app = await bed.start(root(), HostModule);
  const host = app.get<NamedQueue<PaymentJobs>>(getNamedQueueToken('host'));
  const a = await host.add('charge', { cents: 7 });
  const b = await host.add('refund', { chargeId: 'x' });
  expect(await host.waitForResult(a.id, { timeoutMs: 5000 })).toBe('host charged 7');
  expect(await host.waitForResult(b.id, { timeoutMs: 5000 })).toBe('named refund x');
});

test('a WorkerHost with a default @Process() method too is refused: two default handlers', async () => {
  @Processor('twice')
  class TwiceProcessor extends WorkerHost {
    process(): void {}

    @Process()
    other(): void {}
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'twice' })], providers: [TwiceProcessor] })
  class TwiceModule {}

  await expect(bed.start(root(), TwiceModule)).rejects.toThrow(/two default handlers, TwiceProcessor\.other and TwiceProcessor\.process/);
});

test('a NamedQueue addBulk with a bad item is refused with ValidationError and adds nothing', async () => {
  @Module({ imports: [QueueModule.registerQueue({ name: 'bulk-checks' })] })
  class BulkModule {}

  const app = await bed.start(root(), BulkModule);
  const named = app.get<NamedQueue<PaymentJobs>>(getNamedQueueToken('bulk-checks'));
  const good = { name: 'charge', data: { cents: 1 } };
  // Bad input as untyped callers send it: the compiler refuses each of these.
  const refused = async (jobs: unknown, field: string, detail: RegExp) => {
    const err = await named.addBulk(jobs as never).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ field, detail: expect.stringMatching(detail) });
  };
  await refused({ name: 'charge', data: {} }, 'jobs', /^addBulk expects an array of \{ name, data, opts \}$/);
  await refused([good, null], 'jobs[1]', /^must be an object, got null$/);
  await refused([good, { ...good, priority: 5 }], 'jobs[1]', /^unknown option 'priority' \(known: name, data, opts\)$/);
  await refused([good, { data: {} }], 'jobs[1].name', /^must be a string/);
  await refused([good, { name: 7, data: {} }], 'jobs[1].name', /^must be a string/);
  expect(await named.queue.counts()).toMatchObject({ pending: 0, delayed: 0 });
});
