import { consoleHostileInputContract } from './console-hostile-input.contract';
import { consoleRestContract } from './console-rest.contract';
import { consoleRetryPauseContract } from './console-retry-pause.contract';

// Both delivery modes: in the WAL mode the console works on the rows the stream moved to the table.
describe.each(['table', 'wal'] as const)('Outbox console REST admin on PostgreSQL (%s mode)', (mode) => consoleRestContract('postgres', mode));

// Table mode only: these cases check the console's validation of requests, which answers before
// any row or mode is involved; the WAL mode's app has the same controllers and pipes.
describe('Outbox console REST admin on PostgreSQL, hostile input', () => consoleHostileInputContract('postgres'));

describe.each(['table', 'wal'] as const)('Outbox console on PostgreSQL (%s mode): retry now and pauses', (mode) => consoleRetryPauseContract('postgres', mode));
