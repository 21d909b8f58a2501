import { Inject, Injectable } from '@nestjs/common';
import { buildAsyncApiDocument } from '../../core/asyncapi/asyncapi-document';
import type { AsyncApiDocument } from '../../core/asyncapi/asyncapi-document.types';
import { resolveAsyncApiOptions, type ResolvedAsyncApiOptions } from '../../core/asyncapi/asyncapi-options';
import type { AsyncApiSource } from '../../core/asyncapi/asyncapi-source';
import type { ResolvedOutboxSettings } from '../../core/outbox-options';
import { OUTBOX_SETTINGS } from '../outbox.constants';
import { OUTBOX_MODULE_OPTIONS } from '../outbox.module-definition';
import type { OutboxModuleOptions } from '../outbox-module.options';
import { OUTBOX_SCHEMAS } from '../../core/schema-registry/schemas-source';
import type { OutboxSchemas } from '../../schema-registry/outbox-schemas';

/**
 * The AsyncAPI 3.0.0 document of what this app publishes, made from the declared event classes and
 * the module's options. Served by the console at `<path>/api/asyncapi.json`, printed by
 * `nest-outbox asyncapi`, or yours to serve: `@Get('asyncapi.json') spec() { return this.asyncApi.document(); }`.
 */
@Injectable()
export class OutboxAsyncApi implements AsyncApiSource {
  private readonly described: ResolvedAsyncApiOptions;

  constructor(
    @Inject(OUTBOX_SETTINGS) private readonly settings: ResolvedOutboxSettings,
    @Inject(OUTBOX_MODULE_OPTIONS) options: OutboxModuleOptions,
    @Inject(OUTBOX_SCHEMAS) private readonly schemas: OutboxSchemas | null,
  ) {
    // Checked at startup, not at the first request.
    this.described = resolveAsyncApiOptions(options.asyncApi);
  }

  /** Made anew at each call: event classes loaded after bootstrap are included. */
  document(): AsyncApiDocument {
    const schemas = this.schemas;
    return buildAsyncApiDocument({ ...this.described, settings: this.settings, registeredSchemaOf: schemas ? (type, destinations) => schemas.referenceOf(type, destinations) : undefined });
  }
}
