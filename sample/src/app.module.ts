import { Module } from '@nestjs/common';
import { RelqDashboardModule } from 'relq/dashboard/nest';
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
    // The sample listens on 127.0.0.1 only, so its dashboard lets every local user act;
    // a real app checks who asks (docs/dashboard.md, "The guard").
    RelqDashboardModule.forRoot({ path: '/dashboard', guard: () => true }),
    EmailsModule,
    HealthModule,
  ],
})
export class AppModule {}
