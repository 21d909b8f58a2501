import { consoleHostileInputContract } from './console-hostile-input.contract';
import { consoleRestContract } from './console-rest.contract';
import { consoleRetryPauseContract } from './console-retry-pause.contract';

describe('Outbox console REST admin on PostgreSQL', () => consoleRestContract('postgres'));

describe('Outbox console REST admin on PostgreSQL, hostile input', () => consoleHostileInputContract('postgres'));

describe('Outbox console on PostgreSQL: retry now and pauses', () => consoleRetryPauseContract('postgres'));
