/** Internal injection tokens. */
export const OUTBOX_SETTINGS = Symbol('outbox:settings');
export const OUTBOX_EXTRAS = Symbol('outbox:extras');
export const OUTBOX_DATA_SOURCE = Symbol('outbox:data-source');
/** The `SqlConnection` every store runs on: TypeORM's data source, or the module's own `connection`. */
export const OUTBOX_CONNECTION = Symbol('outbox:connection');
/** The connection with how to close it (a pool the module opened from a URL). */
export const OUTBOX_OPENED_CONNECTION = Symbol('outbox:opened-connection');
/** The one `SqlOutboxWriter`: every message is written through it, whatever the data layer and the delivery mode. */
export const OUTBOX_WRITER = Symbol('outbox:writer');
export const OUTBOX_TRACKER = Symbol('outbox:tracker');
/** `SqlTransactionOf`: any data layer's transaction (a TypeORM EntityManager too) as the writer's, with the module's tracker and settings. */
export const OUTBOX_TRANSACTION_OF = Symbol('outbox:transaction-of');
export const OUTBOX_OBSERVABILITY = Symbol('outbox:observability');
/** The delivery's `DeliveryStream` (the WAL mode's slot stream), or `null` in the table mode. */
export const OUTBOX_STREAM = Symbol('outbox:stream');
/** The `DeliveryPlan`: the delivery mode resolved once; what differs between the modes reads it. */
export const OUTBOX_DELIVERY = Symbol('outbox:delivery');
