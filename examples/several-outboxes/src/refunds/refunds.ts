import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { InjectOutbox, OutboxAdmin, OutboxPublisher } from '@nest-outbox/outbox';
import { settings } from '../settings.js';

@Injectable()
export class Refunds {
  constructor(
    @InjectOutbox(OutboxPublisher, 'latam') private readonly latamOutbox: OutboxPublisher,
    @InjectOutbox(OutboxAdmin, 'latam') readonly latamAdmin: OutboxAdmin,
  ) {}

  /** `client` is inside a transaction on the latam database: the event commits or rolls back with it. */
  async refund(client: PoolClient, orderId: string): Promise<void> {
    await client.query('INSERT INTO refunds (order_id) VALUES ($1)', [orderId]);
    // `topic`: added events name their destination (or the module's defaultTopic / resolveTopic does).
    await this.latamOutbox.add(client, { type: 'orders.order-refunded', aggregateType: 'order', aggregateId: orderId, payload: { orderId }, topic: settings.refundsTopic });
  }
}
