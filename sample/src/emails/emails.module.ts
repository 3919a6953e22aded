import { Module } from '@nestjs/common';
import { QueueModule } from 'relq/nest';
import { EmailProcessor } from './email.processor.js';
import { EmailsController } from './emails.controller.js';

@Module({
  imports: [
    QueueModule.registerQueue({
      name: 'emails',
      defaults: { job: { attempts: 5, backoff: { type: 'exponential', delayMs: 500 } } },
    }),
  ],
  controllers: [EmailsController],
  providers: [EmailProcessor],
})
export class EmailsModule {}
