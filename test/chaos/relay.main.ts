/**
 * One relay process of the chaos run: a Nest application context with the outbox module relaying
 * the demo's outbox table to Kafka through the demo's Kafka client settings, wrapped in the
 * ChaosTransport. Started (and killed, stopped, continued) by main.ts; settings in CHAOS_RELAY.
 */
import './register-paths';
import 'reflect-metadata';
import { Injectable, Module, type DynamicModule, type LoggerService, type OnModuleInit } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientKafka, ClientsModule } from '@nestjs/microservices';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxModule } from '@nest-outbox/outbox';
import type { ClaimedMessage, OutgoingMessage } from '@nest-outbox/outbox/core';
import { OutboxObservers, type RelayObserver, type SettledBatch } from '@nest-outbox/outbox/observability';
import { ClientProxyTransport } from '../../libs/outbox/src/transports/client-proxy.transport';
import { ORDER_EVENTS_CLIENT, orderEventsClient } from '../../apps/order-service/src/broker.options';
import { ChaosTransport } from './chaos.transport';
import { BATCH_HEADER, errorText, STREAM_BATCH_BASE, type RelayReport, type RelaySettings } from './chaos.protocol';

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

/**
 * Numbers the relay's claims and puts the number on every message it hands over (BATCH_HEADER), so
 * the ledger knows which claim sent each copy, whatever the number of claims in flight; and reports
 * the claims whose outcome the relay could not record as its own (the settle failed, or another
 * relay had taken rows over), which may be sent again.
 */
@Injectable()
class ClaimNumbering implements RelayObserver, OnModuleInit {
  private claims = 0;
  private streamPublishes = 0;
  private readonly claimOf = new WeakMap<ClaimedMessage, number>();

  constructor(private readonly observers: OutboxObservers) {}

  onModuleInit(): void {
    this.observers.add(this);
  }

  claimed(_relayId: string, messages: readonly ClaimedMessage[]): void {
    const claim = ++this.claims;
    messages.forEach((message) => this.claimOf.set(message, claim));
  }

  publishing(_transport: string, messages: readonly ClaimedMessage[], outgoing: OutgoingMessage[]): void {
    // The WAL stream's messages were never claimed: each of its publishes gets a number of its own.
    const stream = messages.length > 0 && !this.claimOf.has(messages[0]) ? STREAM_BATCH_BASE + ++this.streamPublishes : undefined;
    messages.forEach((message, index) => {
      outgoing[index] = { ...outgoing[index], headers: { ...outgoing[index].headers, [BATCH_HEADER]: String(stream ?? this.claimOf.get(message) ?? 0) } };
    });
  }

  settled(batch: SettledBatch): void {
    const claim = batch.outcomes.length > 0 ? this.claimOf.get(batch.outcomes[0].message) : undefined;
    if (claim === undefined) return; // nothing of it was sent
    const relayId = settings!.relayId;
    if (batch.settleError !== undefined) report({ t: 'incident', relayId, batch: claim, kind: 'settle-failed', rows: 0, text: batch.settleError });
    else if (batch.leaseLost.published > 0) {
      const text = `${batch.leaseLost.published} published row(s) had been taken over after the lease expired`;
      report({ t: 'incident', relayId, batch: claim, kind: 'lease-overrun', rows: batch.leaseLost.published, text });
    } else report({ t: 'settled', relayId, batch: claim });
  }
}

/** Writes Nest's log lines with a timestamp. */
class RelayLogger implements LoggerService {
  log(message: unknown, context?: string): void {
    this.write('LOG', message, context);
  }
  warn(message: unknown, context?: string): void {
    this.write('WARN', message, context);
  }
  error(message: unknown, stackOrContext?: string, context?: string): void {
    this.write('ERROR', message, context ?? stackOrContext);
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
      providers: [ClaimNumbering],
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
              ...(config.delivery === 'wal' ? { delivery: 'wal' as const, wal: { slotName: config.slotName, write: config.walWrite } } : {}),
              defaultTopic: config.topic,
              batchSize: config.batchSize,
              maxBatchesInFlight: config.maxBatchesInFlight,
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
