import { Logger } from '@nestjs/common';
import { OnWorkerEvent, Process, Processor, type Job, type LeasedJob } from 'relq/nest';
import type { EmailJob, EmailReceipt } from './email.types.js';

// Share of first attempts that fail, to show a retry recovering (SAMPLE_FAILURE_RATE, 0..1).
const FAILURE_RATE = Number(process.env.SAMPLE_FAILURE_RATE ?? 0.25);

@Processor('emails', { concurrency: 5 })
export class EmailProcessor {
  private readonly logger = new Logger(EmailProcessor.name);

  @Process()
  async send(job: Job<EmailJob>): Promise<EmailReceipt> {
    this.logger.log(`sending job ${job.id} to ${job.data.to} (attempt ${job.attempt}/${job.maxAttempts})`);
    await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200)); // "SMTP"
    if (job.attempt === 1 && Math.random() < FAILURE_RATE) {
      throw new Error('SMTP relay busy (simulated); will retry');
    }
    return { messageId: `<${job.id}@sample.relq>`, sentAt: new Date().toISOString() };
  }

  @OnWorkerEvent('completed')
  onCompleted(job: LeasedJob<EmailJob>, receipt: EmailReceipt): void {
    this.logger.log(`job ${job.id} completed: sent ${receipt.messageId}`);
  }

  @OnWorkerEvent('failed')
  onFailed(job: LeasedJob<EmailJob>, error: Error, willRetry: boolean): void {
    this.logger.warn(`job ${job.id} failed: ${error.message}${willRetry ? '' : ' (no attempts left)'}`);
  }
}
