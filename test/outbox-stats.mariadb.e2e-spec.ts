import { describeOutboxStats } from './outbox-stats.contract';

describeOutboxStats('mariadb');
