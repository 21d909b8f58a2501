import { describeOutboxContract } from './outbox-store.contract';

describeOutboxContract('sqlite');
