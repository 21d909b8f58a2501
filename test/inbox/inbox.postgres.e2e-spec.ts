import { describeInboxContract } from './inbox.contract';

describeInboxContract('postgres');
