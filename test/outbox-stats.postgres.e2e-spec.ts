import { describeOutboxStats } from './outbox-stats.contract';

describeOutboxStats('postgres');
describeOutboxStats('postgres', 'wal');
