import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { DeliveryStream } from '../core/stream/delivery-stream.port';
import { OUTBOX_STREAM } from './outbox.constants';
import { OutboxRelayHost } from './outbox-relay.host';
import { SHUTDOWN_STAGE, type ReportsShutdownStage } from './shutdown/shutdown-stage';
import { ShutdownSteps } from './shutdown/shutdown-steps';

/**
 * Runs the delivery's stream, when its mode has one (`OUTBOX_STREAM`; none in the table mode):
 * prepares it at init, starts it at bootstrap, and stops it before the transports are closed. The
 * table relay keeps running beside it, for delayed messages and rows written before a switch of modes.
 */
@Injectable()
export class OutboxStreamHost implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnModuleDestroy, ReportsShutdownStage {
  private readonly steps = new ShutdownSteps("the WAL relay's", new Logger('Outbox'));

  // Depending on the relay host also makes Nest run this host's shutdown hook first (dependents
  // before their dependencies), so the stream stops before that host closes the transports.
  constructor(
    @Inject(OUTBOX_STREAM) private readonly stream: DeliveryStream | null,
    private readonly relayHost: OutboxRelayHost,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.stream?.prepare();
  }

  // Nest runs the bootstrap hooks of a module's providers together: the stream waits here for the
  // transports the relay host readies, so that its first batch does not wait for a connection.
  async onApplicationBootstrap(): Promise<void> {
    if (!this.stream) return;
    await this.relayHost.transportsReady();
    this.stream.start();
  }

  // Each step bounded: a broker or a database that does not answer must not hold the process.
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.stream) return;
    await this.stream.stop(this.steps);
    this.steps.done();
  }

  [SHUTDOWN_STAGE](): string | undefined {
    return this.steps.stage;
  }

  onModuleDestroy(): void {
    this.stream?.dispose();
  }
}
