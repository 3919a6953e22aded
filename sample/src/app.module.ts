import { Module } from '@nestjs/common';
import { QueueModule } from 'relq/nest';
import { EmailsModule } from './emails/emails.module.js';
import { HealthModule } from './health/health.module.js';
import { redisConnection } from './redis-connection.js';

@Module({
  imports: [
    QueueModule.forRootAsync({
      useFactory: () => ({
        connection: redisConnection(),
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
