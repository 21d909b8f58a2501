import { Controller, Get, Logger, NotFoundException, Param } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload, TcpContext } from '@nestjs/microservices';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Idempotent, OutboxInbox } from '@nest-outbox/outbox';
import type { OutboxEnvelope } from '@nest-outbox/outbox';
import { settings } from '../settings.js';
import { Shipment } from './shipment.entity.js';

interface OrderPlacedPayload {
  orderId: string;
  customerId: string;
  totalCents: number;
}

@Controller('shipments')
export class ShippingController {
  private readonly logger = new Logger(ShippingController.name);

  constructor(
    private readonly inbox: OutboxInbox,
    @InjectRepository(Shipment) private readonly shipments: Repository<Shipment>,
  ) {}

  // <string> picks EventPattern's untyped overload: without it, Nest 12 types the handler as
  // (data: {}, ...args: unknown[]) and a typed payload or context fails with TS1241.
  @EventPattern<string>(settings.ordersTopic)
  // Delivery is at-least-once: @Idempotent runs the body once per message id, in a transaction
  // that also records the id, so a redelivery is acknowledged without shipping twice.
  @Idempotent('shipping.prepare-shipment')
  async onOrderEvent(@Payload() event: OutboxEnvelope, @Ctx() context: KafkaContext | TcpContext): Promise<void> {
    if (event.type !== 'orders.order-placed') return;
    const { orderId, customerId } = event.payload as OrderPlacedPayload;
    await this.inbox.manager().insert(Shipment, { orderId, customerId });
    const via = context instanceof KafkaContext ? `Kafka partition ${context.getPartition()}` : 'TCP';
    this.logger.log(`Shipment prepared for order ${orderId} (event ${event.id} via ${via})`);
  }

  @Get(':orderId')
  async find(@Param('orderId') orderId: string): Promise<Shipment> {
    const shipment = await this.shipments.findOneBy({ orderId });
    if (!shipment) throw new NotFoundException(`No shipment for order ${orderId} yet`);
    return shipment;
  }
}
