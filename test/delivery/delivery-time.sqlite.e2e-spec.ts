import { describeDeliveryTime } from './delivery-time.contract';

describeDeliveryTime('sqlite');
