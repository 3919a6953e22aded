/**
 * A processor's unit test: createTestJob() gives its handler the job a worker would, without
 * Redis, and records what the handler did with it. docs/testing.md shows this file.
 */
import { UnrecoverableError } from 'relq';
import { createTestJob } from 'relq/testing';
import { EmailProcessor } from './emails/email.processor.js';
import type { EmailJob } from './emails/email.types.js';

describe('EmailProcessor', () => {
  const processor = new EmailProcessor();

  test('renders the email, logs and reports progress', async () => {
    const job = createTestJob<EmailJob>({ to: 'ada@example.com', subject: 'Welcome' }, { attempt: 2 });

    await expect(processor.send(job)).resolves.toEqual({ to: 'ada@example.com', body: 'Hello ada@example.com: Welcome', attempt: 2 });
    expect(job.logs).toEqual(['rendering for ada@example.com']);
    expect(job.progressUpdates).toEqual([{ rendered: 30 }]);
  });

  test('dead-letters a malformed address', async () => {
    const job = createTestJob<EmailJob>({ to: 'nobody', subject: 'Welcome' });

    await expect(processor.send(job)).rejects.toThrow(UnrecoverableError);
    expect(job.rejections).toEqual(['not an email address: nobody']);
  });

  test('stops once its lease is lost', async () => {
    const job = createTestJob<EmailJob>({ to: 'ada@example.com', subject: 'Welcome' });
    job.loseLease();

    await expect(processor.send(job)).rejects.toThrow(/lease of job test-job-\d+ was lost/);
    expect(job.logs).toEqual([]); // a lost lease writes nothing
  });
});
