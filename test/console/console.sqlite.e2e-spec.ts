import { consoleHostileInputContract } from './console-hostile-input.contract';
import { consoleRestContract } from './console-rest.contract';
import { consoleRetryPauseContract } from './console-retry-pause.contract';

describe('Outbox console REST admin on SQLite', () => consoleRestContract('sqlite'));

describe('Outbox console REST admin on SQLite, hostile input', () => consoleHostileInputContract('sqlite'));

describe('Outbox console on SQLite: retry now and pauses', () => consoleRetryPauseContract('sqlite'));
