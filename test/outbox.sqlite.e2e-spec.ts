import { describeMalformedRows } from './malformed-rows.contract';
import { describeDeadLettersAndCleanup } from './dead-letters.contract';
import { describeOutboxContract } from './outbox-store.contract';

describeOutboxContract('sqlite');
describeDeadLettersAndCleanup('sqlite');
describeMalformedRows('sqlite');
