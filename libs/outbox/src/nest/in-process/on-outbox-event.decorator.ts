import type { Type } from '@nestjs/common';

export const ON_OUTBOX_EVENT_METADATA = 'outbox:on_outbox_event';

export interface OnOutboxEventOptions {
  /** Stable, unique name of the handler: it names the handler's rows (their destination). Required. */
  name: string;
  /** Run the handler through the inbox (needs `OutboxInboxModule`), so a redelivery after a crash does not run it twice. Default `false`. */
  inbox?: boolean;
}

export interface OnOutboxEventMetadata {
  event: string | Type<unknown>;
  options: Partial<OnOutboxEventOptions>;
}

/**
 * Runs a provider method for every event of a type, from the outbox, in this app: no broker.
 * Each handler gets rows of its own, with the guarantees of a broker destination (retries with
 * backoff, dead letters, per-aggregate order). The method receives the `OutboxEnvelope`; a
 * `OutboxNonRetryableError` it throws sends the row to dead at once.
 */
export function OnOutboxEvent(event: string | Type<unknown>, options: OnOutboxEventOptions): MethodDecorator {
  return (target, key, descriptor) => {
    const list: Array<OnOutboxEventMetadata> = Reflect.getMetadata(ON_OUTBOX_EVENT_METADATA, descriptor.value as object) ?? [];
    // Checked at bootstrap, where an error can name every culprit and the known event types.
    Reflect.defineMetadata(ON_OUTBOX_EVENT_METADATA, [...list, { event, options: { ...options } }], descriptor.value as object);
    return descriptor;
  };
}
