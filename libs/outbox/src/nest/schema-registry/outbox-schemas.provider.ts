import { Inject, Injectable, type OnModuleInit, type Provider } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import { destinationsOfEvent, type DeclaredAggregate } from '../../core/asyncapi/event-destinations';
import { isDescribing } from '../../core/asyncapi/describe-mode';
import { declaredAggregates } from '../../core/event-metadata';
import type { ResolvedOutboxSettings } from '../../core/outbox-options';
import { resolveSchemaRegistryOptions } from '../../core/schema-registry/schema-registry.options';
import { OutboxSchemas } from '../../schema-registry/outbox-schemas';
import { OUTBOX_SCHEMAS } from '../../core/schema-registry/schemas-source';
import { schemaRegistryNeedsEnvelopeHeaders } from '../../core/schema-registry/schema-registry.messages';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { IN_PROCESS_TRANSPORT } from '../../transports/in-process.transport';
import { OUTBOX_MODULE_OPTIONS } from '../outbox.module-definition';
import type { OutboxModuleOptions } from '../outbox-module.options';
import { OUTBOX_SETTINGS } from '../outbox.constants';


export const outboxSchemasProvider: Provider = {
  provide: OUTBOX_SCHEMAS,
  inject: [OUTBOX_MODULE_OPTIONS, OUTBOX_SETTINGS],
  useFactory: (options: OutboxModuleOptions, settings: ResolvedOutboxSettings): OutboxSchemas | null => {
    if (options.schemaRegistry === undefined) return null;
    // The wire format's value is the payload alone: consumers rebuild the envelope from the outbox-* headers.
    if (settings.envelope.headers !== 'all') throw new OutboxConfigurationError(schemaRegistryNeedsEnvelopeHeaders(settings.envelope.headers));
    const aggregates: DeclaredAggregate[] = declaredAggregates().map(({ aggregateClass, options: declared }) => ({ aggregateType: declared.aggregateType ?? aggregateClass.name, topic: declared.topic }));
    return new OutboxSchemas(resolveSchemaRegistryOptions(options.schemaRegistry), {
      destinationsOf: (metadata) => destinationsOfEvent(metadata, aggregates, settings).destinations.filter(({ transport }) => transport !== IN_PROCESS_TRANSPORT).map(({ destination }) => destination),
      plainTransports: [IN_PROCESS_TRANSPORT],
    });
  },
};

/**
 * Registers (or looks up) every event's schema at module init, after its compatibility check: an
 * incompatible change stops the start, before the app writes anything.
 */
@Injectable()
export class OutboxSchemasHost implements OnModuleInit {
  constructor(@Inject(OUTBOX_SCHEMAS) private readonly schemas: OutboxSchemas | null) {}

  async onModuleInit(): Promise<void> {
    // `nest-outbox asyncapi` loads the app to describe it, not to run it.
    if (this.schemas && !isDescribing()) await this.schemas.prepare();
  }
}

/** The module's `OutboxSchemas` for code that resolves providers by hand (the transports), `null` where there is none. */
export function schemasOf(moduleRef: ModuleRef): OutboxSchemas | null {
  try {
    return moduleRef.get<OutboxSchemas | null>(OUTBOX_SCHEMAS, { strict: true });
  } catch {
    return null;
  }
}
