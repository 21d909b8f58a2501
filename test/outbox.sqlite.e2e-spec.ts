import { describeOutboxStoreContract } from '@nest-outbox/outbox/testing';
import { describeMalformedRows } from './malformed-rows.contract';
import { describeDeadLettersAndCleanup } from './dead-letters.contract';
import { describeOutboxContract } from './outbox-store.contract';
import { sqlStoreSubject } from './support/sql-store.subject';

describeOutboxContract('sqlite');
describeDeadLettersAndCleanup('sqlite');
describeMalformedRows('sqlite');
// The skip policy's claim differs only in which statuses hold an aggregate, the same SQL fragment on every database.
describeOutboxStoreContract(sqlStoreSubject('sqlite', 'skip'));
