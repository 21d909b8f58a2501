import { describeDeliveryTime } from './delivery-time.contract';

describeDeliveryTime('mariadb');
