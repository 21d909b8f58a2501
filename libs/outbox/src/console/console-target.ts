import type { Provider } from '@nestjs/common';
import { OutboxConsole } from '../core/console/outbox-console';
import { OutboxReplay } from '../core/replay/outbox-replay';
import type { SqlConnection } from '../core/sql-connection.port';
import type { OutboxStatsSnapshot } from '../core/stats/outbox-stats';
import { OutboxStats } from '../nest/observe/outbox.stats';
import { OUTBOX_CONNECTION, OUTBOX_EXTRAS } from '../nest/outbox.constants';
import type { ResolvedOutboxExtras } from '../nest/outbox.module-definition';
import { OutboxRelayHost } from '../nest/outbox-relay.host';
import { createSqlOutboxConsoleStore, createSqlOutboxMaintenanceStore, createSqlReplayStore } from '../sql/outbox-sql.factory';

/** The outbox a console request works on: its table's rows and replay, its stats, and its relay to wake after an action. */
export interface ConsoleTarget {
  console: OutboxConsole;
  replayer: OutboxReplay;
  stats(options: { fresh?: boolean }): Promise<OutboxStatsSnapshot>;
  wakeRelay(): Promise<void>;
  /** Shown in the page's title and heading (an outbox's name, a tenant's id); letters, digits, `_`, `-`, `.` only. */
  heading?: string;
}

/**
 * Finds the target when a request uses it, not before: a mount over tenant outboxes knows its tenant
 * from the URL, and an unknown one is refused only after the guard let the request through.
 */
export type ConsoleTargetRef = () => ConsoleTarget;

export const CONSOLE_TARGET = Symbol('outbox:console-target');

/** The target of a console over one outbox (`OutboxModule`, named or not): one for the app's life. */
export const outboxConsoleTarget: Provider = {
  provide: CONSOLE_TARGET,
  inject: [OUTBOX_CONNECTION, OUTBOX_EXTRAS, OutboxStats, OutboxRelayHost],
  useFactory: (connection: SqlConnection, extras: ResolvedOutboxExtras, stats: OutboxStats, relayHost: OutboxRelayHost): ConsoleTargetRef => {
    const target: ConsoleTarget = {
      console: new OutboxConsole(createSqlOutboxConsoleStore(connection, extras), createSqlOutboxMaintenanceStore(connection, extras)),
      replayer: new OutboxReplay(createSqlReplayStore(connection, extras)),
      stats: (options) => stats.snapshot(options),
      wakeRelay: () => relayHost.drain(),
    };
    return () => target;
  },
};
