import { consoleHostileInputContract } from './console-hostile-input.contract';
import { consoleRestContract } from './console-rest.contract';

describe('Outbox console REST admin on PostgreSQL', () => consoleRestContract('postgres'));

describe('Outbox console REST admin on PostgreSQL, hostile input', () => consoleHostileInputContract('postgres'));
