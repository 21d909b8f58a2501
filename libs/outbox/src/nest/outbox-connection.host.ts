import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { OpenedConnection } from '../adapters/connection/open-connection';
import { settleWithin } from '../core/deadline';
import { OUTBOX_OPENED_CONNECTION } from './outbox.constants';
import { SHUTDOWN_STAGE, SHUTDOWN_STEP_TIMEOUT_MS, type ReportsShutdownStage } from './shutdown/shutdown-stage';
import { shutdownStepTimedOut } from './shutdown/shutdown.messages';

/**
 * Closes the pool the module opened from `connection.url`, at application shutdown: after the relay
 * drained and handed back its leases (`beforeApplicationShutdown`), which it does over this pool.
 */
@Injectable()
export class OutboxConnectionHost implements OnApplicationShutdown, ReportsShutdownStage {
  private readonly logger = new Logger('Outbox');
  private closed = false;
  private closing = false;

  constructor(@Inject(OUTBOX_OPENED_CONNECTION) private readonly opened: OpenedConnection) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A pool's end() waits for the clients it lent: one stuck on a server that does not answer would hold the stop.
    this.closing = true;
    if ((await settleWithin(this.opened.close(), SHUTDOWN_STEP_TIMEOUT_MS)) === 'timeout') {
      this.logger.warn(shutdownStepTimedOut("closing the outbox's connection pool", SHUTDOWN_STEP_TIMEOUT_MS));
    }
    this.closing = false;
  }

  [SHUTDOWN_STAGE](): string | undefined {
    return this.closing ? "closing the outbox's connection pool" : undefined;
  }
}
