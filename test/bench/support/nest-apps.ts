import { Module, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BenchParcel } from './entities';
import { kafkaLogLevel, postgresOptions } from './env';
import { CreateOutboxTable, OutboxModule, type OutboxModuleOptions } from './outbox';

@Module({})
class BenchAppModule {}

export interface BenchAppOptions {
  postgresUrl: string;
  schema: string;
  /** Create `bench_parcels` (synchronize) and run the outbox migration. */
  migrate: boolean;
  /** Leave the outbox module out entirely (P2's baseline). */
  withoutOutbox?: boolean;
  /** Module options; `transport: 'KAFKA'` uses the Kafka client registered here. */
  outbox?: OutboxModuleOptions;
  kafka?: { brokers: string[]; clientId: string };
  poolSize?: number;
}

/**
 * A Nest application context wired the way the README tells users to: TypeOrmModule.forRoot
 * with the outbox migration, ClientsModule.register with a producer-only Kafka client
 * (`acks: -1`), and OutboxModule.forRoot.
 */
export async function startBenchApp(options: BenchAppOptions): Promise<{ app: INestApplicationContext; dataSource: DataSource }> {
  const imports: DynamicModule[] = [
    TypeOrmModule.forRoot({
      ...postgresOptions(options.postgresUrl, options.schema, options.poolSize ?? 10),
      entities: [BenchParcel],
      autoLoadEntities: true,
      synchronize: options.migrate,
      migrations: options.migrate && !options.withoutOutbox ? [CreateOutboxTable] : [],
      migrationsRun: options.migrate && !options.withoutOutbox,
    } as TypeOrmModuleOptions),
  ];
  if (options.kafka) {
    imports.push(
      ClientsModule.register([
        {
          name: 'KAFKA',
          transport: Transport.KAFKA,
          options: {
            client: { clientId: options.kafka.clientId, brokers: options.kafka.brokers, logLevel: kafkaLogLevel() },
            producerOnlyMode: true,
            send: { acks: -1 },
          },
        },
      ]),
    );
  }
  if (!options.withoutOutbox) imports.push(OutboxModule.forRoot(options.outbox ?? { relay: false }));
  const app = await NestFactory.createApplicationContext({ module: BenchAppModule, imports }, { logger: process.env.BENCH_VERBOSE ? ['error', 'warn', 'log'] : false });
  return { app, dataSource: app.get(DataSource) };
}
