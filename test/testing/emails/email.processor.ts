import { Process, Processor, type Job } from 'relq/nest';
import type { EmailJob, EmailReceipt } from './email.types.js';

@Processor('emails')
export class EmailProcessor {
  @Process()
  async send(job: Job<EmailJob>): Promise<EmailReceipt> {
    // no retry can fix a malformed address: dead-letter at once
    if (!job.data.to.includes('@')) job.reject(`not an email address: ${job.data.to}`);
    await job.log(`rendering for ${job.data.to}`);
    const body = `Hello ${job.data.to}: ${job.data.subject}`;
    await job.updateProgress({ rendered: body.length });
    job.signal.throwIfAborted(); // the lease was lost or the attempt timed out: stop here
    return { to: job.data.to, body, attempt: job.attempt };
  }
}
