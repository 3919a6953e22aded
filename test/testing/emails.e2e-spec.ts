/**
 * An e2e test: the app's own module on a private redis-server, with a real Queue and the
 * processor's lease loop. docs/testing.md shows this file.
 */
import { Test, type TestingModule } from '@nestjs/testing';
import { getQueueToken, QueueModule, type Queue } from 'relq/nest';
import { startTestRedis, type TestRedis } from 'relq/testing';
import type { EmailJob, EmailReceipt } from './emails/email.types.js';
import { EmailsModule } from './emails/emails.module.js';
import { EmailsService } from './emails/emails.service.js';

describe('emails, end to end', () => {
  let redis: TestRedis;
  let app: TestingModule;

  beforeAll(async () => {
    redis = await startTestRedis();
    app = await Test.createTestingModule({
      // a prefix of its own: with REDIS_URL set, the server may be shared
      imports: [QueueModule.forRoot({ connection: redis.url, prefix: `e2e-${Date.now()}` }), EmailsModule],
    }).compile();
    await app.init(); // starts EmailProcessor's lease loop
  });

  afterAll(async () => {
    await app?.close(); // first the app: lease loops drain, connections close
    await redis?.stop(); // then the server
  });

  test('a welcome email is sent once, with its log line and progress', async () => {
    const service = app.get(EmailsService);
    const id = await service.welcome('ada@example.com');
    expect(await service.welcome('ada@example.com')).toBe(id);

    const emails = app.get<Queue<EmailJob, EmailReceipt>>(getQueueToken('emails'));
    await expect(emails.waitForResult(id, { timeoutMs: 10_000 })).resolves.toEqual({
      to: 'ada@example.com',
      body: 'Hello ada@example.com: Welcome',
      attempt: 1,
    });
    expect(await emails.getJob(id)).toMatchObject({ state: 'completed', logs: ['rendering for ada@example.com'], progress: { rendered: 30 } });
    expect(await emails.counts()).toMatchObject({ pending: 0, working: 0, completed: 1, dead: 0 });
  });
});
