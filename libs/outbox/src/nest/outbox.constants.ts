/** Internal injection tokens. */
export const OUTBOX_SETTINGS = Symbol('outbox:settings');
export const OUTBOX_EXTRAS = Symbol('outbox:extras');
export const OUTBOX_DATA_SOURCE = Symbol('outbox:data-source');
export const OUTBOX_WRITER = Symbol('outbox:writer');
export const OUTBOX_TRACKER = Symbol('outbox:tracker');
export const OUTBOX_OBSERVABILITY = Symbol('outbox:observability');
export const OUTBOX_SQL_WRITER = Symbol('outbox:sql-writer');
