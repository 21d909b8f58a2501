import { Controller, Get, Logger, ParseUUIDPipe, Query, type Type } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { Idempotent, isOutboxEnvelope, OutboxInbox, type OutboxEnvelope } from '@nest-outbox/outbox';
import { continueOutboxTrace } from '@nest-outbox/outbox/observability';
import { OrderTimelineEntry } from './order-timeline.entity';
import { ReceivedEventsStore, type ReceivedEvent } from './received-events.store';

/**
 * The consuming side of the demo: a microservice handler for the orders topic. The topic is
 * configuration, so the controller is made for it at startup.
 */
export function createOrderEventsController(topic: string): Type<unknown> {
  @Controller('received-events')
  class OrderEventsController {
    private readonly logger = new Logger('OrderEventsConsumer');

    constructor(
      private readonly received: ReceivedEventsStore,
      private readonly inbox: OutboxInbox,
      @InjectRepository(OrderTimelineEntry) private readonly timeline: Repository<OrderTimelineEntry>,
    ) {}

    @EventPattern<Record<string, OutboxEnvelope>>(topic)
    handle(@Payload() envelope: OutboxEnvelope, @Ctx() context: unknown): Promise<void> {
      // Not an outbox envelope (or one with an unusable id): the inbox records it as poison and the
      // handler returns, so the offset is committed and the partition moves on.
      if (!isOutboxEnvelope(envelope)) return this.addToTimeline(envelope);
      // Every delivery is counted (at-least-once shows here); the side effect runs once per message.
      const fromKafka = context instanceof KafkaContext ? kafkaDetails(context) : {};
      const event = this.received.record({ transport: context instanceof KafkaContext ? 'kafka' : 'tcp', topic, envelope, ...fromKafka });
      this.logger.log(`${envelope.type} v${envelope.version} for ${envelope.aggregateType} ${envelope.aggregateId} (delivery ${event.deliveries})`);
      // The handler's span joins the trace of the HTTP request that wrote the event.
      return continueOutboxTrace(envelope, () => this.addToTimeline(envelope));
    }

    /**
     * Writes the timeline entry and the inbox mark in one transaction; a redelivered message is
     * skipped. A message that fails 5 times (the poison policy's default) is recorded and acknowledged.
     */
    @Idempotent('order-service.timeline')
    async addToTimeline(envelope: OutboxEnvelope): Promise<void> {
      await this.inbox.manager().insert(OrderTimelineEntry, {
        messageId: envelope.id,
        orderId: envelope.aggregateId,
        eventType: envelope.type,
        occurredAt: envelope.occurredAt,
      });
    }

    @Get('timeline')
    // Order ids are UUIDs: anything else (a NUL character, which PostgreSQL refuses) is a 400, not a database error.
    timelineOf(@Query('orderId', new ParseUUIDPipe({ optional: true })) orderId?: string): Promise<OrderTimelineEntry[]> {
      return this.timeline.find({ where: orderId ? { orderId } : {}, order: { occurredAt: 'ASC' } });
    }

    @Get()
    list(@Query('aggregateId') aggregateId?: string): ReceivedEvent[] {
      return this.received.list(aggregateId);
    }
  }
  return OrderEventsController;
}

function kafkaDetails(context: KafkaContext): Pick<ReceivedEvent, 'key' | 'headers'> {
  const message = context.getMessage();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.map(String).join(',') : value.toString();
  }
  return { key: message.key?.toString(), headers };
}
