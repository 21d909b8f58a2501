import { describeInboxContract } from './inbox.contract';

// The inbox contract with OutboxInboxModule.forRoot({ connection }): the module's own transactions on a pg pool, no TypeORM.
describeInboxContract('postgres', 'connection');
