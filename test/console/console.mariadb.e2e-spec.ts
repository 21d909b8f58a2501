import { consoleHostileInputContract } from './console-hostile-input.contract';
import { consoleRestContract } from './console-rest.contract';

describe('Outbox console REST admin on MariaDB', () => consoleRestContract('mariadb'));

describe('Outbox console REST admin on MariaDB, hostile input', () => consoleHostileInputContract('mariadb'));
