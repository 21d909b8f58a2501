import { describeInboxContract } from './inbox.contract';

// The inbox contract with OutboxInboxModule.forRoot({ connection: { url: 'sqlite:…' } }): the module's own better-sqlite3 handle, no TypeORM.
describeInboxContract('sqlite', 'connection');
