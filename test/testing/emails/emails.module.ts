import { Module } from '@nestjs/common';
import { QueueModule } from 'relq/nest';
import { EmailProcessor } from './email.processor.js';
import { EmailsService } from './emails.service.js';

@Module({
  imports: [QueueModule.registerQueue({ name: 'emails' })],
  providers: [EmailsService, EmailProcessor],
  exports: [EmailsService],
})
export class EmailsModule {}
