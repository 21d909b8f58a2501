import { OutboxConfigurationError } from '../../core/outbox.errors';
import { checkConsumerName, looksLikeEnvelope } from '../../core/inbox/inbox-settings';
import { inboxNotWired, noEnvelopeArgument, notAMethod } from '../../core/inbox/inbox.messages';
import { envelopeOfCloudEvent, headersOf } from '../../core/cloudevents/received-cloud-event';

export const IDEMPOTENT_METADATA = 'outbox:idempotent';

/** The undecorated method, kept on the wrapper: a replay runs it with the recorded message. */
export const IDEMPOTENT_HANDLER_METADATA = 'outbox:idempotent_handler';

/** Set on instances by the explorer: the inbox their `@Idempotent()` methods run through. */
export const INBOX_REF = Symbol('outbox:inbox-ref');

interface InboxRunner {
  readonly poison?: unknown;
  processEnvelope<R>(message: unknown, consumer: string, work: () => Promise<R> | R): Promise<{ duplicate: boolean; result?: R }>;
}

/**
 * Runs a message handler once per message: the handler's body runs inside an inbox transaction
 * (reach it with `OutboxInbox.manager()`), and a message this consumer has already processed is
 * acknowledged without running it. The handler receives the outbox envelope among its arguments
 * (`@Payload()`); `consumer` names the handler and must be unique and stable.
 * Under the poison policy (on by default), a delivery that is not an outbox envelope, or whose
 * handler has failed `poison.maxAttempts` times, is recorded and the handler returns normally, so
 * the broker acknowledges it and the partition moves on. A replay calls the method with the
 * recorded envelope as its only argument.
 */
export function Idempotent(consumer: string): MethodDecorator {
  checkConsumerName(consumer);
  return (target, key, descriptor: PropertyDescriptor) => {
    const original = descriptor.value as (...args: unknown[]) => unknown;
    const handlerName = `${target.constructor.name}.${String(key)}`;
    if (typeof original !== 'function') throw new OutboxConfigurationError(notAMethod(consumer, handlerName));
    const wrapped = async function (this: Record<symbol, InboxRunner | undefined>, ...args: unknown[]) {
      const inbox = this[INBOX_REF];
      if (!inbox) throw new OutboxConfigurationError(inboxNotWired(handlerName));
      // A binary CloudEvent first (its payload may well have an id and a type of its own), then the envelope
      // or a structured CloudEvent, or else the payload: the first argument that is not the transport's context.
      const message = binaryCloudEvent(args) ?? args.find(looksLikeEnvelope) ?? args.find((arg) => !isRpcContext(arg));
      if (!looksLikeEnvelope(message) && !inbox.poison) throw new OutboxConfigurationError(noEnvelopeArgument(handlerName));
      const outcome = await inbox.processEnvelope(message, consumer, () => original.apply(this, args));
      return outcome.duplicate ? undefined : outcome.result;
    };
    // Decorators below this one (@EventPattern, @MessagePattern) put their metadata on the original function.
    for (const metadataKey of Reflect.getOwnMetadataKeys(original)) {
      Reflect.defineMetadata(metadataKey, Reflect.getOwnMetadata(metadataKey, original), wrapped);
    }
    Object.defineProperty(wrapped, 'name', { value: original.name });
    Reflect.defineMetadata(IDEMPOTENT_METADATA, consumer, wrapped);
    Reflect.defineMetadata(IDEMPOTENT_HANDLER_METADATA, original, wrapped);
    descriptor.value = wrapped;
    return descriptor;
  };
}

/** The envelope of a binary CloudEvent: the payload argument read with the ce_* headers of the handler's context (`@Ctx()`). */
function binaryCloudEvent(args: unknown[]): unknown {
  const context = args.find(isRpcContext);
  if (!context) return undefined;
  const headers = headersOf(context);
  if (headers['ce_id'] === undefined && headers['ce-id'] === undefined) return undefined;
  return envelopeOfCloudEvent(args.find((arg) => !isRpcContext(arg)), context);
}

/** A Nest transport context (`KafkaContext`, `RmqContext`, ...), told by its methods so that `@nestjs/microservices` stays optional. */
function isRpcContext(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { getArgs?: unknown }).getArgs === 'function' && typeof (value as { getArgByIndex?: unknown }).getArgByIndex === 'function';
}
