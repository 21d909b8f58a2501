import { OutboxConfigurationError } from '../../core/outbox.errors';
import { checkConsumerName, looksLikeEnvelope } from '../../core/inbox/inbox-settings';
import { inboxNotWired, noEnvelopeArgument, notAMethod } from '../../core/inbox/inbox.messages';

export const IDEMPOTENT_METADATA = 'outbox:idempotent';

/** Set on instances by the explorer: the inbox their `@Idempotent()` methods run through. */
export const INBOX_REF = Symbol('outbox:inbox-ref');

interface InboxRunner {
  process<R>(message: { id: string }, consumer: string, work: () => Promise<R> | R): Promise<{ duplicate: boolean; result?: R }>;
}

/**
 * Runs a message handler once per message: the handler's body runs inside an inbox transaction
 * (reach it with `OutboxInbox.manager()`), and a message this consumer has already processed is
 * acknowledged without running it. The handler receives the outbox envelope among its arguments
 * (`@Payload()`); `consumer` names the handler and must be unique and stable.
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
      const envelope = args.find(looksLikeEnvelope);
      if (!envelope) throw new OutboxConfigurationError(noEnvelopeArgument(handlerName));
      const outcome = await inbox.process(envelope, consumer, () => original.apply(this, args));
      return outcome.duplicate ? undefined : outcome.result;
    };
    // Decorators below this one (@EventPattern, @MessagePattern) put their metadata on the original function.
    for (const metadataKey of Reflect.getOwnMetadataKeys(original)) {
      Reflect.defineMetadata(metadataKey, Reflect.getOwnMetadata(metadataKey, original), wrapped);
    }
    Object.defineProperty(wrapped, 'name', { value: original.name });
    Reflect.defineMetadata(IDEMPOTENT_METADATA, consumer, wrapped);
    descriptor.value = wrapped;
    return descriptor;
  };
}
