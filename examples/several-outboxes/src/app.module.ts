import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreateOutboxTable, OutboxModule } from '@nest-outbox/outbox';
import { KafkaClientModule } from './kafka.client.js';
import { CreateOrdersTable1767225600000 } from './orders/create-orders-table.migration.js';
import { OrdersModule } from './orders/orders.module.js';
import { RefundsModule } from './refunds/refunds.module.js';
import { settings } from './settings.js';

// A TypeORM data source per database; its migrations create the outbox table (CreateOutboxTable) and the app's.
const database = (name: string, url: string) =>
  TypeOrmModule.forRoot({ name, type: 'postgres', url, autoLoadEntities: true, migrations: [CreateOutboxTable, CreateOrdersTable1767225600000], migrationsRun: true });

@Module({
  imports: [
    KafkaClientModule,
    database('eu', settings.euDatabaseUrl),
    database('us', settings.usDatabaseUrl),
    // Captures the @PublishesEvents aggregates saved through the data source 'eu'.
    OutboxModule.forRoot({ name: 'eu', dataSource: 'eu', transport: 'KAFKA' }),
    // The WAL mode (needs pg-logical-replication, and wal_level = logical on that server).
    OutboxModule.forRoot({ name: 'us', dataSource: 'us', transport: 'KAFKA', delivery: 'wal', wal: { slotName: settings.usSlotName } }),
    // No TypeORM: events added with OutboxPublisher.add(client, …) in that database's transactions.
    OutboxModule.forRoot({ name: 'latam', connection: { url: settings.latamDatabaseUrl }, transport: 'KAFKA' }),
    OrdersModule,
    RefundsModule,
  ],
})
export class AppModule {}
