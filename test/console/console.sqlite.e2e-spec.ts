import { consoleHostileInputContract } from './console-hostile-input.contract';
import { consoleRestContract } from './console-rest.contract';

describe('Outbox console REST admin on SQLite', () => consoleRestContract('sqlite'));

describe('Outbox console REST admin on SQLite, hostile input', () => consoleHostileInputContract('sqlite'));
