import { describeInboxContract } from './inbox.contract';

describeInboxContract('sqlite');
