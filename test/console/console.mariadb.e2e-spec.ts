import { consoleHostileInputContract } from './console-hostile-input.contract';
import { consoleRestContract } from './console-rest.contract';
import { consoleRetryPauseContract } from './console-retry-pause.contract';

describe('Outbox console REST admin on MariaDB', () => consoleRestContract('mariadb'));

describe('Outbox console REST admin on MariaDB, hostile input', () => consoleHostileInputContract('mariadb'));

describe('Outbox console on MariaDB: retry now and pauses', () => consoleRetryPauseContract('mariadb'));
