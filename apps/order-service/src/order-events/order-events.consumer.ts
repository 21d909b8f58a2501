import { Controller, Get, Logger, Query, type Type } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { continueOutboxTrace, type OutboxEnvelope } from '@nest-outbox/outbox';
import { ReceivedEventsStore, type ReceivedEvent } from './received-events.store';

/**
 * The consuming side of the demo: a microservice handler for the orders topic. The topic is
 * configuration, so the controller is made for it at startup.
 */
export function createOrderEventsController(topic: string): Type<unknown> {
  @Controller('received-events')
  class OrderEventsController {
    private readonly logger = new Logger('OrderEventsConsumer');

    constructor(private readonly received: ReceivedEventsStore) {}

    @EventPattern<Record<string, OutboxEnvelope>>(topic)
    handle(@Payload() envelope: OutboxEnvelope, @Ctx() context: unknown): void {
      // The handler's span joins the trace of the HTTP request that wrote the event.
      continueOutboxTrace(envelope, () => {
        const fromKafka = context instanceof KafkaContext ? kafkaDetails(context) : {};
        const event = this.received.record({ transport: context instanceof KafkaContext ? 'kafka' : 'tcp', topic, envelope, ...fromKafka });
        this.logger.log(`${envelope.type} v${envelope.version} for ${envelope.aggregateType} ${envelope.aggregateId} (delivery ${event.deliveries})`);
      });
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
