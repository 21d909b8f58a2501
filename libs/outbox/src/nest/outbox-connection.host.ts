import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { OpenedConnection } from '../adapters/connection/open-connection';
import { OUTBOX_OPENED_CONNECTION } from './outbox.constants';

/**
 * Closes the pool the module opened from `connection.url`, at application shutdown: after the relay
 * drained and handed back its leases (`beforeApplicationShutdown`), which it does over this pool.
 */
@Injectable()
export class OutboxConnectionHost implements OnApplicationShutdown {
  private closed = false;

  constructor(@Inject(OUTBOX_OPENED_CONNECTION) private readonly opened: OpenedConnection) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.opened.close();
  }
}
