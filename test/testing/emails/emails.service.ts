import { Injectable } from '@nestjs/common';
import { InjectQueue, Queue } from 'relq/nest';
import type { EmailJob, EmailReceipt } from './email.types.js';

@Injectable()
export class EmailsService {
  constructor(@InjectQueue('emails') private readonly emails: Queue<EmailJob, EmailReceipt>) {}

  /** Queues a welcome email once per address, however often it is asked for. */
  async welcome(to: string): Promise<string> {
    const { id } = await this.emails.add({ to, subject: 'Welcome' }, { jobId: `welcome:${to}`, attempts: 5 });
    return id;
  }
}
