/**
 * The writer of the chaos run: places orders and pays or cancels some of them through the demo's
 * Order aggregate in DataSource transactions, on PostgreSQL with the outbox module (relay off). A share
 * of the transactions throws after saving, so that they roll back. Every operation and its outcome
 * goes to a JSON-lines ledger that main.ts checks the outbox against.
 */
import './register-paths';
import 'reflect-metadata';
import { appendFileSync } from 'node:fs';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { OutboxModule } from '@nest-outbox/outbox';
import { Order, OrderLine } from '../../apps/order-service/src/orders/order.entity';
import { errorText, prng, type WriterOp, type WriterOutcome, type WriterRecord, type WriterReport, type WriterSettings } from './chaos.protocol';

const settings = JSON.parse(process.env.CHAOS_WRITER ?? 'null') as WriterSettings | null;
if (!settings) throw new Error('CHAOS_WRITER is not set: writer.main.js is started by the chaos orchestrator (npm run chaos).');
process.on('disconnect', () => process.exit(3));

class DeliberateRollback extends Error {
  override readonly name = 'DeliberateRollback';
}

@Module({})
class WriterModule {
  static register(config: WriterSettings): DynamicModule {
    return {
      module: WriterModule,
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: config.postgresUrl,
          schema: config.schema,
          extra: { options: `-c search_path=${config.schema}`, max: config.concurrency + 2, connectionTimeoutMillis: 5_000 },
          entities: [Order, OrderLine],
          autoLoadEntities: true,
          synchronize: false,
          migrationsRun: false,
          retryAttempts: 60,
          retryDelay: 500,
        }),
        OutboxModule.forRoot({ relay: false, defaultTopic: config.topic, ...(config.delivery === 'wal' ? { delivery: 'wal' as const, wal: { slotName: config.slotName, write: config.walWrite } } : {}) }),
      ],
    };
  }
}

type Known = 'placed' | 'paid' | 'cancelled';

async function main(config: WriterSettings): Promise<void> {
  const app = await NestFactory.createApplicationContext(WriterModule.register(config), { logger: ['error', 'warn'] });
  const dataSource = app.get(DataSource);
  const random = prng(config.seed);
  send({ t: 'ready' });

  // Orders whose every operation so far has a known outcome, by their committed status.
  const orders = new Map<string, Known>();
  const busy = new Set<string>();
  const counts: Record<WriterOutcome, number> = { committed: 0, 'rolled-back': 0, failed: 0, uncertain: 0 };
  let seq = 0;
  let inFlight = 0;

  const pick = (): { op: WriterOp; orderId?: string } => {
    if (orders.size > 0 && random() < 0.45) {
      // Prefer recent orders: their earlier events are often still pending, which exercises ordering.
      const ids = [...orders.keys()];
      for (let tries = 0; tries < 5; tries++) {
        const id = ids[Math.max(0, ids.length - 1 - Math.floor(random() * Math.min(ids.length, 200)))];
        const status = orders.get(id);
        if (busy.has(id) || status === 'cancelled') continue;
        return { op: status === 'placed' && random() < 0.6 ? 'pay' : 'cancel', orderId: id };
      }
    }
    return { op: 'place' };
  };

  const perform = async (op: WriterOp, existing: string | undefined, rollback: boolean): Promise<void> => {
    let orderId = existing ?? '';
    let reachedCommit = false;
    let outcome: WriterOutcome;
    let error: string | undefined;
    try {
      await dataSource.transaction(async (manager) => {
        let order: Order;
        if (op === 'place') {
          const lines = [{ sku: `SKU-${Math.floor(random() * 50)}`, quantity: 1 + Math.floor(random() * 3), unitPriceCents: 100 + Math.floor(random() * 5_000) }];
          order = Order.place(`c-${Math.floor(random() * 500)}`, lines);
          orderId = order.id;
        } else {
          // As OrdersService does: the order row locked, the change decided by the aggregate.
          const found = await manager.findOne(Order, { where: { id: orderId }, lock: { mode: 'pessimistic_write', tables: ['orders'] } });
          if (!found) throw new Error(`order ${orderId} not found`);
          order = found;
          if (op === 'pay') order.pay();
          else order.cancel('chaos');
        }
        await manager.save(order);
        if (rollback) throw new DeliberateRollback(`rolled back on purpose after saving (${op} ${orderId})`);
        reachedCommit = true;
      });
      outcome = 'committed';
    } catch (failure) {
      error = errorText(failure);
      // A failure after the work was done can only come from COMMIT: it may or may not have happened.
      outcome = failure instanceof DeliberateRollback ? 'rolled-back' : reachedCommit ? 'uncertain' : 'failed';
    }
    counts[outcome] += 1;
    const record: WriterRecord = { seq: ++seq, orderId, op, outcome, at: Date.now(), error: outcome === 'rolled-back' ? undefined : error };
    appendFileSync(config.ledgerFile, `${JSON.stringify(record)}\n`);
    if (!orderId) return;
    if (outcome === 'committed') orders.set(orderId, op === 'place' ? 'placed' : op === 'pay' ? 'paid' : 'cancelled');
    // After an unknown outcome the order's state is unknown: leave it alone from now on.
    if (outcome === 'uncertain') orders.delete(orderId);
  };

  const end = Date.now() + config.durationMs;
  const interval = 1_000 / config.opsPerSecond;
  let next = Date.now();
  const running = new Set<Promise<void>>();
  while (Date.now() < end) {
    if (inFlight < config.concurrency) {
      const { op, orderId } = pick();
      const rollback = random() < config.rollbackRate;
      if (orderId) busy.add(orderId);
      inFlight += 1;
      const task = perform(op, orderId, rollback).finally(() => {
        inFlight -= 1;
        if (orderId) busy.delete(orderId);
        running.delete(task);
      });
      running.add(task);
    }
    next += interval;
    const wait = next - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    else if (wait < -1_000) next = Date.now(); // fell behind (database down): do not burst afterwards
  }
  await Promise.all(running);
  send({ t: 'done', counts, ops: seq });
  await app.close();
}

function send(message: WriterReport): void {
  if (process.connected) process.send?.(message);
}

main(settings).then(
  () => (process.connected ? process.send?.({ t: 'exit' }, () => process.exit(0)) : process.exit(0)),
  (error: unknown) => {
    console.error(`writer failed: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(1);
  },
);
