import type { Provider } from '@nestjs/common';
import { toSqlTransaction, type SqlTransactionOf } from '../adapters/data-layer-transaction';
import type { DataLayerOptions } from '../adapters/data-layer.port';
import { OutboxMessageFactory } from '../core/outbox-message.factory';
import type { ResolvedOutboxSettings } from '../core/outbox-options';
import { OutboxTracingHost } from './observe/outbox-tracing.host';
import { SqlOutboxWriter } from '../sql/sql-outbox.writer';
import { ClaimCheck } from '../core/claim-check/claim-check';
import type { PayloadStore } from '../core/claim-check/payload-store.port';
import { claimCheckStore } from './claim-check/claim-check.store';
import type { DeliveryPlan } from '../core/stream/delivery-plan';
import type { OutboxTransactionTracker } from '../typeorm/outbox-transaction.tracker';
import { notificationChannel } from '../sql/postgres-notification.listener';
import { InProcessHandlers } from './in-process/in-process-handlers';
import { OutboxRelayHost } from './outbox-relay.host';
import { OUTBOX_DELIVERY, OUTBOX_EXTRAS, OUTBOX_SETTINGS, OUTBOX_STREAM, OUTBOX_TRACKER, OUTBOX_TRANSACTION_OF, OUTBOX_WRITER } from './outbox.constants';
import type { DeliveryStream } from '../core/stream/delivery-stream.port';
import type { ResolvedOutboxExtras } from './outbox.module-definition';
import type { OutboxSchemas } from '../schema-registry/outbox-schemas';
import { OUTBOX_SCHEMAS } from '../core/schema-registry/schemas-source';

/** Builds rows the same way for every writer: settings, the active trace's headers, in-process routes. */
export function outboxMessageFactory(
  settings: ResolvedOutboxSettings,
  tracing: OutboxTracingHost,
  inProcess: InProcessHandlers,
  schemas: OutboxSchemas | null = null,
  payloads?: PayloadStore,
): OutboxMessageFactory {
  const claims = settings.claimCheck && payloads ? new ClaimCheck(settings.claimCheck, { store: payloads.name, location: payloads.location, keyPrefix: payloads.keyPrefix }) : undefined;
  return new OutboxMessageFactory({
    ...settings,
    claims,
    captureHeaders: tracing.capture,
    extraRoutes: () => inProcess.routes(),
    beforeWrite: schemas ? (draft, messages) => schemas.checkBeforeWrite(draft, messages) : undefined,
  });
}

/** The one writer, on the module's table: for TypeORM's transactions and those of every other data layer, in either delivery mode. */
export const outboxWriterProvider: Provider = {
  provide: OUTBOX_WRITER,
  inject: [OUTBOX_SETTINGS, OUTBOX_EXTRAS, OUTBOX_DELIVERY, OutboxTracingHost, InProcessHandlers, OutboxRelayHost, OUTBOX_STREAM, OUTBOX_SCHEMAS],
  useFactory: (
    settings: ResolvedOutboxSettings,
    extras: ResolvedOutboxExtras,
    delivery: DeliveryPlan,
    tracing: OutboxTracingHost,
    inProcess: InProcessHandlers,
    relayHost: OutboxRelayHost,
    stream: DeliveryStream | null,
    schemas: OutboxSchemas | null,
  ) => {
    const payloadStore = claimCheckStore(settings.claimCheck, extras);
    return new SqlOutboxWriter(outboxMessageFactory(settings, tracing, inProcess, schemas, payloadStore), extras, {
      notifyChannel: settings.notifications ? notificationChannel(extras) : undefined,
      wal: delivery.mode === 'wal' ? { prefix: delivery.prefix, write: delivery.write, messagesDecoded: () => stream?.sourceReady ?? true } : undefined,
      onDelayed: (delayMs) => relayHost.wakeIn(delayMs),
      payloadStore,
    });
  },
};

/** How the subscriber and `OutboxPublisher.add` hand the writer a transaction of any data layer: with the module's tracker and settings. */
export const outboxTransactionOfProvider: Provider = {
  provide: OUTBOX_TRANSACTION_OF,
  inject: [OUTBOX_SETTINGS, OUTBOX_TRACKER],
  useFactory: (settings: ResolvedOutboxSettings, tracker: OutboxTransactionTracker): SqlTransactionOf => {
    const options: DataLayerOptions = { preparedStatements: settings.preparedStatements, writeWithCommit: settings.writeWithCommit, followed: tracker };
    return (transaction) => toSqlTransaction(transaction, options);
  },
};
