import { Controller, Get, Header, Injectable, Module, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Registry } from 'prom-client';
import { RelqMetrics } from 'relq/metrics';
import { QueueRegistry } from 'relq/nest';

/** relq's metrics in a registry of the app's own; every queue the app registered is watched. */
@Injectable()
export class MetricsService implements OnModuleInit, OnModuleDestroy {
  readonly registry = new Registry();
  private readonly metrics = new RelqMetrics({ registry: this.registry });

  constructor(private readonly queues: QueueRegistry) {}

  onModuleInit(): void {
    for (const name of this.queues.getQueueNames()) this.metrics.watchQueue(this.queues.getQueue(name));
  }

  onModuleDestroy(): void {
    this.metrics.close();
  }
}

@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}

@Module({ controllers: [MetricsController], providers: [MetricsService] })
export class MetricsModule {}
