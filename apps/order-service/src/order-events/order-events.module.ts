import { Module, type DynamicModule } from '@nestjs/common';
import { createOrderEventsController } from './order-events.consumer';
import { ReceivedEventsStore } from './received-events.store';

@Module({})
export class OrderEventsModule {
  static register(topic: string): DynamicModule {
    return {
      module: OrderEventsModule,
      controllers: [createOrderEventsController(topic)],
      providers: [ReceivedEventsStore],
      exports: [ReceivedEventsStore],
    };
  }
}
