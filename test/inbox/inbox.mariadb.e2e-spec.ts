import { describeInboxContract } from './inbox.contract';

describeInboxContract('mariadb');
