import { describeInboxContract } from './inbox.contract';

// The inbox contract with OutboxInboxModule.forRoot({ connection: { pool } }) on a mysql2 pool: the module's own transactions, no TypeORM.
describeInboxContract('mariadb', 'connection');
