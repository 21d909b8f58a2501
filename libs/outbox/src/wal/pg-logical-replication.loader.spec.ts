import { OutboxConfigurationError } from '../core/outbox.errors';
import { loadPgLogicalReplication } from './pg-logical-replication.loader';

// The package is installed in this repository: make it look absent, as it is in an app that never added it.
jest.mock('pg-logical-replication', () => {
  throw Object.assign(new Error("Cannot find module 'pg-logical-replication'"), { code: 'MODULE_NOT_FOUND' });
});

describe('the WAL mode without pg-logical-replication', () => {
  it('says to install the package or to use the table mode; "delivery" has no off', () => {
    expect(loadPgLogicalReplication).toThrow(OutboxConfigurationError);
    expect(loadPgLogicalReplication).toThrow(
      `OutboxModule option "delivery" needs the package "pg-logical-replication", which is not installed. ` +
        `Run "npm install pg-logical-replication", or set delivery: 'table' (the default).`,
    );
  });
});
