/**
 * Token of each outbox's Schema Registry schemas (`null` without the `schemaRegistry` option),
 * under a registered symbol so that `nest-outbox schemas check` finds them in the app's copy of
 * the library.
 */
export const OUTBOX_SCHEMAS = Symbol.for('@nest-outbox/outbox:schemas');

/** One subject as `nest-outbox schemas check` reports it. */
export interface CheckedSubject {
  eventType: string;
  subject: string;
  format: string;
  status: 'new' | 'unchanged' | 'compatible' | 'incompatible';
  latestVersion?: number;
  level?: string;
  problems: string[];
}

/** What the CLI calls on the schemas it finds by `OUTBOX_SCHEMAS`. */
export interface SchemasSource {
  check(): Promise<CheckedSubject[]>;
  prepare(): Promise<void>;
}
