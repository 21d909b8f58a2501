import { consoleReplayContract } from './console-replay.contract';

describe('Replay of published messages on MariaDB', () => consoleReplayContract('mariadb'));
