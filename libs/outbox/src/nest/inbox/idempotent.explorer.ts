import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { duplicateConsumerName } from '../../core/inbox/inbox.messages';
import { IDEMPOTENT_HANDLER_METADATA, IDEMPOTENT_METADATA, INBOX_REF } from './idempotent.decorator';
import { OutboxInbox } from './outbox-inbox';

/** Gives every instance with `@Idempotent()` handlers the inbox, registers them for replays, and refuses a consumer name used twice. */
@Injectable()
export class IdempotentExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly inbox: OutboxInbox,
  ) {}

  onModuleInit(): void {
    const owners = new Map<string, string>();
    const wrappers = [...this.discovery.getControllers(), ...this.discovery.getProviders()];
    for (const wrapper of wrappers) {
      const instance = wrapper.instance as Record<string | symbol, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance);
      let found = false;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const consumer = Reflect.getMetadata(IDEMPOTENT_METADATA, prototype[method]) as string | undefined;
        if (consumer === undefined) continue;
        const handler = `${instance.constructor.name}.${method}`;
        const first = owners.get(consumer);
        if (first && first !== handler) throw new OutboxConfigurationError(duplicateConsumerName(consumer, first, handler));
        owners.set(consumer, handler);
        found = true;
        const original = Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, prototype[method]) as (message: unknown) => unknown;
        this.inbox.poison?.register(consumer, (message) => original.call(instance, message));
      }
      if (found) Object.defineProperty(instance, INBOX_REF, { value: this.inbox, enumerable: false, configurable: true });
    }
  }
}
