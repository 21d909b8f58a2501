import type { Provider } from '@nestjs/common';
import { OutboxMessageFactory } from '../core/outbox-message.factory';
import type { ResolvedOutboxSettings } from '../core/outbox-options';
import { OutboxTracingHost } from './observe/outbox-tracing.host';
import { SqlOutboxWriter } from '../sql/sql-outbox.writer';
import { walNames } from '../core/stream/wal-options';
import { walMessagePrefix } from '../core/stream/wal-record';
import { notificationChannel } from '../sql/postgres-notification.listener';
import { InProcessHandlers } from './in-process/in-process-handlers';
import { OutboxRelayHost } from './outbox-relay.host';
import { OUTBOX_EXTRAS, OUTBOX_SETTINGS, OUTBOX_SQL_WRITER } from './outbox.constants';
import type { ResolvedOutboxExtras } from './outbox.module-definition';

/** Builds rows the same way for every writer: settings, the active trace's headers, in-process routes, delayed wake-ups. */
export function outboxMessageFactory(settings: ResolvedOutboxSettings, tracing: OutboxTracingHost, inProcess: InProcessHandlers, relayHost: OutboxRelayHost): OutboxMessageFactory {
  return new OutboxMessageFactory({ ...settings, captureHeaders: tracing.capture, extraRoutes: () => inProcess.routes(), onDelayed: (delayMs) => relayHost.wakeIn(delayMs) });
}

/** The writer for transactions of other data layers (Prisma, Drizzle, Kysely, MikroORM, pg), on the module's table. */
export const outboxSqlWriterProvider: Provider = {
  provide: OUTBOX_SQL_WRITER,
  inject: [OUTBOX_SETTINGS, OUTBOX_EXTRAS, OutboxTracingHost, InProcessHandlers, OutboxRelayHost],
  useFactory: (settings: ResolvedOutboxSettings, extras: ResolvedOutboxExtras, tracing: OutboxTracingHost, inProcess: InProcessHandlers, relayHost: OutboxRelayHost) =>
    new SqlOutboxWriter(outboxMessageFactory(settings, tracing, inProcess, relayHost), extras, {
      notifyChannel: settings.notifications ? notificationChannel(extras) : undefined,
      walPrefix: settings.delivery === 'wal' ? walMessagePrefix(walNames(extras, settings.wal).slotName) : undefined,
    }),
};
