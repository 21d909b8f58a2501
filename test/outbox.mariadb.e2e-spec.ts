import { describeDeadLettersAndCleanup } from './dead-letters.contract';
import { describeOutboxContract } from './outbox-store.contract';

describeOutboxContract('mariadb');
describeDeadLettersAndCleanup('mariadb');
