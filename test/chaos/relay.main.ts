/**
 * One relay process of the chaos run: a Nest application context with the outbox module relaying
 * the demo's outbox table to Kafka through the demo's Kafka client settings, wrapped in the
 * ChaosTransport. Started (and killed, stopped, continued) by main.ts; settings in CHAOS_RELAY.
 */
import './register-paths';
import 'reflect-metadata';
import { Module, type DynamicModule, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientKafka, ClientsModule } from '@nestjs/microservices';
import { TypeOrmModule } from '@nestjs/typeorm';
import diagnosticsChannel from 'node:diagnostics_channel';
import { ClientProxyTransport, OUTBOX_CHANNELS, OutboxModule } from '@nest-outbox/outbox';
import { ORDER_EVENTS_CLIENT, orderEventsClient } from '../../apps/order-service/src/broker.options';
import { ChaosTransport } from './chaos.transport';
import { errorText, type RelayReport, type RelaySettings } from './chaos.protocol';

const settings = JSON.parse(process.env.CHAOS_RELAY ?? 'null') as RelaySettings | null;
if (!settings) throw new Error('CHAOS_RELAY is not set: relay.main.js is started by the chaos orchestrator (npm run chaos).');

function report(message: RelayReport): void {
  if (process.connected) process.send?.(message);
}

// Without the orchestrator there is nobody to stop us: never outlive it.
process.on('disconnect', () => process.exit(3));
process.on('message', (message: { t?: string; holdMs?: number }) => {
  if (message.t === 'arm') transport?.arm(message.holdMs ?? 0);
});

let transport: ChaosTransport | undefined;
// Every call the relay makes to publish one claim carries that claim's batch number.
diagnosticsChannel.subscribe(OUTBOX_CHANNELS.claimed, () => transport?.beginClaim());

/** Writes Nest's log lines with a timestamp, and turns what the relay says about its own batches into reports. */
class RelayLogger implements LoggerService {
  log(message: unknown, context?: string): void {
    this.write('LOG', message, context);
  }
  warn(message: unknown, context?: string): void {
    this.write('WARN', message, context);
    const text = String(message);
    const takenOver = /(\d+) published row\(s\) had been taken over/.exec(text);
    if (takenOver && transport) {
      report({ t: 'incident', relayId: settings!.relayId, batch: transport.currentBatch, kind: 'lease-overrun', rows: Number(takenOver[1]), text });
    }
  }
  error(message: unknown, stackOrContext?: string, context?: string): void {
    this.write('ERROR', message, context ?? stackOrContext);
    const text = String(message);
    if (text.includes('could not record the batch outcome') && transport) {
      report({ t: 'incident', relayId: settings!.relayId, batch: transport.currentBatch, kind: 'settle-failed', rows: 0, text });
    }
  }
  debug(): void {}
  verbose(): void {}
  private write(level: string, message: unknown, context?: string): void {
    process.stdout.write(`${new Date().toISOString()} ${settings!.relayId} ${level} [${context ?? ''}] ${String(message)}\n`);
  }
}

@Module({})
class RelayModule {
  static register(config: RelaySettings): DynamicModule {
    return {
      module: RelayModule,
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: config.postgresUrl,
          schema: config.schema,
          extra: { options: `-c search_path=${config.schema}`, max: 6, connectionTimeoutMillis: 5_000 },
          autoLoadEntities: true,
          synchronize: false,
          migrationsRun: false,
          // A replacement may start while PostgreSQL restarts: keep trying instead of dying.
          retryAttempts: 60,
          retryDelay: 500,
        }),
        // The demo's own Kafka client settings (acks -1, short client retries, the relay retries).
        ClientsModule.register({
          clients: [orderEventsClient({ transport: 'kafka', brokers: config.brokers, clientId: config.relayId, groupId: `${config.relayId}-unused` })],
          isGlobal: true,
        }),
        OutboxModule.forRootAsync({
          inject: [ORDER_EVENTS_CLIENT],
          useFactory: (client: ClientKafka) => {
            transport = new ChaosTransport(new ClientProxyTransport(client), config.relayId, config.errorRate, config.publishTimeoutMs, report);
            return {
              transport,
              relay: true,
              relayId: config.relayId,
              defaultTopic: config.topic,
              batchSize: config.batchSize,
              leaseMs: config.leaseMs,
              publishTimeoutMs: config.publishTimeoutMs,
              pollIntervalMs: config.pollIntervalMs,
              maxAttempts: 1_000,
              backoff: { initialMs: 100, maxMs: 2_000, jitter: 0.2 },
              shutdownTimeoutMs: 3_000,
            };
          },
        }),
      ],
    };
  }
}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(RelayModule.register(settings!), { logger: new RelayLogger() });
  app.enableShutdownHooks();
  report({ t: 'ready', relayId: settings!.relayId });
}

process.on('unhandledRejection', (error) => process.stdout.write(`${new Date().toISOString()} ${settings.relayId} UNHANDLED ${errorText(error)}\n`));
main().catch((error: unknown) => {
  process.stdout.write(`${new Date().toISOString()} ${settings.relayId} FATAL ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
