import { Injectable, type PipeTransform, type Type } from '@nestjs/common';
import type { OutboxEnvelope } from '../../core/outbox-message';
import { toOutboxEvent } from '../../core/typed/to-outbox-event';

/**
 * `@Payload(new OutboxEventPipe(OrderPlaced)) event: OrderPlaced`: the envelope becomes the typed,
 * upcast and validated event instance, or the handler is not called and an
 * `OutboxEventValidationError` names the problem.
 */
@Injectable()
export class OutboxEventPipe<T extends object> implements PipeTransform<OutboxEnvelope, T> {
  constructor(private readonly eventClass: Type<T>) {}

  transform(envelope: OutboxEnvelope): T {
    return toOutboxEvent(this.eventClass, envelope);
  }
}
