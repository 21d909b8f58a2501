import { Controller, Get, Header, Inject, Res, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import type { Response } from 'express';
import { OutboxHealthIndicator } from '@nest-outbox/outbox/observability';
import type { Registry } from 'prom-client';
import { METRICS_REGISTRY } from './metrics-registry.module';
import { ConsumerReadiness } from './consumer-readiness';

/** What an operator scrapes and probes: Prometheus metrics and the health of the outbox. */
@Controller()
export class OperationsController {
  constructor(
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
    private readonly health: HealthCheckService,
    private readonly outbox: OutboxHealthIndicator,
    private readonly consumer: ConsumerReadiness,
  ) {}

  @Get('metrics')
  @Header('Cache-Control', 'no-store')
  async metrics(@Res({ passthrough: true }) response: Response): Promise<string> {
    response.type(this.registry.contentType);
    return this.registry.metrics();
  }

  /** 200 with `status: ok` when the outbox keeps up; 503 with the reason when a threshold is passed. */
  @Get('health')
  @HealthCheck()
  check() {
    return this.health.check([() => this.outbox.isHealthy('outbox')]);
  }

  /** 200 once the event consumer has joined its broker; 503 while it joins (orders are taken meanwhile) or after it failed. */
  @Get('health/consumer')
  @Header('Cache-Control', 'no-store')
  consumerReadiness() {
    const snapshot = this.consumer.snapshot();
    if (snapshot.state !== 'ready') throw new ServiceUnavailableException({ statusCode: 503, consumer: snapshot });
    return { consumer: snapshot };
  }
}
