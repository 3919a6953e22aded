/**
 * A service's unit test in a Nest testing module, without Redis: the app's own module, its
 * queue swapped for a FakeQueue that records the adds and runs them through the processor.
 * docs/testing.md shows this file.
 */
import { Test, type TestingModule } from '@nestjs/testing';
import { getQueueToken, QueueModule } from 'relq/nest';
import { createFakeQueue } from 'relq/testing';
import { EmailProcessor } from './emails/email.processor.js';
import type { EmailJob, EmailReceipt } from './emails/email.types.js';
import { EmailsModule } from './emails/emails.module.js';
import { EmailsService } from './emails/emails.service.js';

describe('EmailsService', () => {
  const emails = createFakeQueue<EmailJob, EmailReceipt>('emails');
  let moduleRef: TestingModule;

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({
      // the connection is opened on first use: with the queue swapped out, never
      imports: [QueueModule.forRoot({ connection: 'redis://127.0.0.1:6379' }), EmailsModule],
    })
      .overrideProvider(getQueueToken('emails'))
      .useValue(emails)
      .compile();
    moduleRef.useLogger(false); // relq warns that EmailProcessor does not run: its queue is a fake
    await moduleRef.init();
  });

  afterAll(async () => {
    await moduleRef?.close();
  });

  test('queues one welcome email per address, which the processor sends', async () => {
    const service = moduleRef.get(EmailsService);

    expect(await service.welcome('ada@example.com')).toBe('welcome:ada@example.com');
    await service.welcome('ada@example.com'); // the same jobId: nothing added

    expect(emails.added).toHaveLength(1);
    expect(emails.added[0]).toMatchObject({ id: 'welcome:ada@example.com', data: { to: 'ada@example.com', subject: 'Welcome' } });
    expect(emails.added[0]!.policy.attempts).toBe(5);

    const processor = moduleRef.get(EmailProcessor);
    const drained = await emails.drain((job) => processor.send(job));
    expect(drained).toEqual([expect.objectContaining({ status: 'completed', result: expect.objectContaining({ to: 'ada@example.com', attempt: 1 }) })]);
    expect(emails.pending).toEqual([]);
  });
});
