// @nest-outbox/outbox/console: the operator console (a page and a REST admin API over the outbox
// and inbox tables) and the migrations of its paused-destinations table.
export { OutboxConsoleModule } from './outbox-console.module';
export type { OutboxConsoleOptions } from './outbox-console.options';
export { consoleBasicAuth, type ConsoleBasicAuthOptions } from './console-basic-auth';
export {
  AddOutboxPausedTable,
  AddOutboxPauseReason,
  createOutboxPausedTableMigration,
  createOutboxPauseReasonMigration,
} from '../typeorm/console/add-paused-table.migration';
