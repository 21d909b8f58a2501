import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OrderTimelineEntry } from './order-timeline.entity';
import { createOrderEventsController } from './order-events.consumer';
import { ReceivedEventsStore } from './received-events.store';

@Module({})
export class OrderEventsModule {
  static register(topic: string): DynamicModule {
    return {
      module: OrderEventsModule,
      imports: [TypeOrmModule.forFeature([OrderTimelineEntry])],
      controllers: [createOrderEventsController(topic)],
      providers: [ReceivedEventsStore],
      exports: [ReceivedEventsStore],
    };
  }
}
