import { Injectable, OnModuleInit, type Type } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import {
  duplicateHandlerName,
  handlerInboxMissing,
  invalidHandlerType,
  missingHandlerName,
  unknownEventType,
} from '../../core/in-process.messages';
import type { OutboxEnvelope } from '../../core/outbox-message';
import { declaredEventTypes, eventClassOf, getOutboxEventMetadata } from '../../core/event-metadata';
import { OutboxInbox } from '../inbox/outbox-inbox';
import { ON_OUTBOX_EVENT_METADATA, type OnOutboxEventMetadata } from './on-outbox-event.decorator';
import { InProcessHandlers } from './in-process-handlers';

/** Finds `@OnOutboxEvent()` methods on providers and registers them, refusing anything that would silently never run. */
@Injectable()
export class InProcessHandlersExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly moduleRef: ModuleRef,
    private readonly handlers: InProcessHandlers,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance);
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const declarations: OnOutboxEventMetadata[] | undefined = Reflect.getMetadata(ON_OUTBOX_EVENT_METADATA, prototype[method]);
        for (const declaration of declarations ?? []) this.register(instance, method, declaration);
      }
    }
  }

  private register(instance: Record<string, unknown>, method: string, { event, options }: OnOutboxEventMetadata): void {
    const owner = `${instance.constructor.name}.${method}`;
    const type = typeOf(event, owner);
    if (typeof options.name !== 'string' || options.name.trim() === '' || options.name.length > 255) {
      throw new OutboxConfigurationError(missingHandlerName(owner));
    }
    const name = options.name;
    const existing = this.handlers.get(name);
    if (existing) throw new OutboxConfigurationError(duplicateHandlerName(name, existing.owner, owner));
    const call = (envelope: OutboxEnvelope) => (instance[method] as (envelope: OutboxEnvelope) => unknown).call(instance, envelope);
    let run = call;
    if (options.inbox) {
      const inbox = this.findInbox();
      if (!inbox) throw new OutboxConfigurationError(handlerInboxMissing(owner));
      // A set-aside message resolves like a handled one: the row is published, the record stays for an operator.
      run = async (envelope) => ((await inbox.process(envelope, name, () => call(envelope))).duplicate ? undefined : 'done');
      inbox.poison?.register(name, (message) => call(message as OutboxEnvelope));
    }
    this.handlers.register({ name, type, owner, run });
  }

  private findInbox(): OutboxInbox | undefined {
    try {
      return this.moduleRef.get(OutboxInbox, { strict: false });
    } catch {
      return undefined;
    }
  }
}

function typeOf(event: string | Type<unknown>, owner: string): string {
  if (typeof event === 'function') {
    const metadata = getOutboxEventMetadata(event.prototype as object);
    if (!metadata) throw new OutboxConfigurationError(invalidHandlerType(owner, event.name));
    return metadata.type;
  }
  if (typeof event !== 'string' || event.trim() === '') throw new OutboxConfigurationError(invalidHandlerType(owner, event));
  if (!eventClassOf(event)) throw new OutboxConfigurationError(unknownEventType(event, owner, declaredEventTypes()));
  return event;
}
