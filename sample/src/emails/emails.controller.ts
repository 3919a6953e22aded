import { BadRequestException, Body, Controller, Get, NotFoundException, Param, Post } from '@nestjs/common';
import { InjectQueue, Queue } from 'relq/nest';
import type { EmailJob, EmailReceipt } from './email.types.js';

@Controller('emails')
export class EmailsController {
  constructor(@InjectQueue('emails') private readonly emails: Queue<EmailJob, EmailReceipt>) {}

  @Post()
  async enqueue(@Body() body: Partial<EmailJob> | undefined): Promise<{ id: string }> {
    const { to, subject, body: text } = body ?? {};
    if (typeof to !== 'string' || typeof subject !== 'string' || typeof text !== 'string') {
      throw new BadRequestException('expected a JSON body { to, subject, body } of strings');
    }
    const { id } = await this.emails.add({ to, subject, body: text });
    return { id };
  }

  @Get(':id')
  async status(@Param('id') id: string) {
    const job = await this.emails.getJob(id);
    if (!job) throw new NotFoundException(`no email job ${id}`);
    return {
      id: job.id,
      status: job.state,
      attempts: job.dequeues,
      failures: job.failures,
      lastError: job.lastError ?? null,
      result: job.result ?? null,
    };
  }
}
