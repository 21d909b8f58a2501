import { consoleRestContract } from './console-rest.contract';

describe('Outbox console REST admin on MariaDB', () => consoleRestContract('mariadb'));
