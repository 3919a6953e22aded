import { Module } from '@nestjs/common';
import { QueueModule } from 'relq/nest';
import { EmailsModule } from './emails/emails.module.js';
import { HealthModule } from './health/health.module.js';

@Module({
  imports: [
    QueueModule.forRootAsync({
      useFactory: () => ({
        connection: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        prefix: process.env.RELQ_PREFIX ?? 'relq-sample',
        shutdown: { drainTimeoutMs: 5000 },
        health: { maxDead: 100 },
      }),
    }),
    EmailsModule,
    HealthModule,
  ],
})
export class AppModule {}
