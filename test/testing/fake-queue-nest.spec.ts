/**
 * A FakeQueue swapped into a Nest module for its queue (`overrideProvider(getQueueToken(name))
 * .useValue(fake)`): the module starts without Redis, whatever the queue's consumers are, and
 * the fake adds jobs with the defaults the module gives that queue.
 */
import { Injectable, Module, type LoggerService } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { getQueueToken, InjectQueue, OnQueueEvent, QueueEventsListener, QueueModule, type QueueModuleOptions, type QueueProducer, type RegisterQueueOptions } from 'relq/nest';
import { createFakeQueue, type FakeQueue } from 'relq/testing';

@Injectable()
class Reports {
  constructor(@InjectQueue('reports') readonly queue: QueueProducer<string>) {}
}

@QueueEventsListener('reports')
class ReportEvents {
  readonly seen: string[] = [];

  @OnQueueEvent('completed')
  onCompleted({ jobId }: { jobId: string }): void {
    this.seen.push(jobId);
  }
}

/** Warnings the module logged. */
class Warnings implements LoggerService {
  readonly lines: string[] = [];
  log(): void {}
  error(): void {}
  warn(message: unknown): void {
    this.lines.push(String(message));
  }
}

const opened: TestingModule[] = [];
afterAll(async () => {
  for (const m of opened) await m.close();
});

/** A testing module of forRoot(root) and a feature module with `queue` registered, `fake` in its place. */
async function withFake(fake: FakeQueue<string>, root: QueueModuleOptions, queue: RegisterQueueOptions, providers: Array<new (...args: never[]) => unknown>) {
  @Module({ imports: [QueueModule.registerQueue(queue)], providers })
  class Feature {}

  const warnings = new Warnings();
  // the connection is opened on first use: with the queue swapped out, never (no Redis here)
  const moduleRef = await Test.createTestingModule({ imports: [QueueModule.forRoot({ connection: 'redis://127.0.0.1:1', ...root }), Feature] })
    .overrideProvider(getQueueToken(queue.name))
    .useValue(fake)
    .compile();
  opened.push(moduleRef);
  moduleRef.useLogger(warnings);
  await moduleRef.init();
  return { moduleRef, warnings };
}

test("a @QueueEventsListener of the swapped queue is not started, as its processor is not, and says so", async () => {
  const fake = createFakeQueue<string>('reports');
  const { moduleRef, warnings } = await withFake(fake, {}, { name: 'reports' }, [Reports, ReportEvents]);

  expect(warnings.lines).toEqual([`ReportEvents: not started, because the provider of queue 'reports' was overridden (${getQueueToken('reports')})`]);
  await moduleRef.get(Reports).queue.add('monthly');
  expect(fake.added.map((j) => j.data)).toEqual(['monthly']);
});

test("the fake adds with the module's defaults for its queue (forRoot's under registerQueue's), its own over them", async () => {
  const fake = createFakeQueue<string>('reports', { defaults: { job: { leaseMs: 5000 } } });
  const { moduleRef } = await withFake(
    fake,
    { defaults: { job: { attempts: 4, backoff: 250, keepCompletedMs: 1000 } } },
    { name: 'reports', defaults: { job: { attempts: 6 }, processor: { concurrency: 2 } } },
    [Reports],
  );

  await moduleRef.get(Reports).queue.add('monthly');
  await moduleRef.get(Reports).queue.add('weekly', { attempts: 1 });
  expect(fake.added.map((j) => j.policy)).toEqual([
    expect.objectContaining({ attempts: 6, backoff: { type: 'fixed', delayMs: 250, jitter: 0 }, keepCompletedMs: 1000, leaseMs: 5000 }),
    expect.objectContaining({ attempts: 1, backoff: { type: 'fixed', delayMs: 250, jitter: 0 }, keepCompletedMs: 1000, leaseMs: 5000 }),
  ]);
});
