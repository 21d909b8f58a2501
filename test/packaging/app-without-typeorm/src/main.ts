// An app without TypeORM: OutboxModule with `connection`, an event added in a node-postgres
// transaction next to the app's own row, and an in-process handler the relay publishes it to.
// One greeting commits, one rolls back. The last line printed is a JSON result for the test.
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Pool } from 'pg';
import { OnOutboxEvent, OutboxEvent, OutboxModule, OutboxPublisher, type OutboxEnvelope } from '@nest-outbox/outbox';

const databaseUrl = process.env.DATABASE_URL!;

@OutboxEvent('greetings.greeted')
export class Greeted {
  constructor(readonly name: string) {}
}

@Injectable()
export class GreetingLog {
  readonly received: OutboxEnvelope[] = [];

  @OnOutboxEvent(Greeted, { name: 'greetings.log' })
  async onGreeted(event: OutboxEnvelope): Promise<void> {
    this.received.push(event);
  }
}

@Module({
  imports: [OutboxModule.forRoot({ connection: { url: databaseUrl }, pollIntervalMs: 100 })],
  providers: [GreetingLog],
})
export class AppModule {}

async function greet(pool: Pool, outbox: OutboxPublisher, name: string, commit: boolean): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('INSERT INTO greetings (name) VALUES ($1)', [name]);
    await outbox.add(client, { type: 'greetings.greeted', aggregateType: 'greeting', aggregateId: name, payload: { name } });
    await client.query(commit ? 'COMMIT' : 'ROLLBACK');
  } finally {
    client.release();
  }
}

async function main(): Promise<void> {
  const pool = new Pool({ connectionString: databaseUrl, max: 2 });
  const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
  try {
    const outbox = app.get(OutboxPublisher);
    await greet(pool, outbox, 'rolled-back', false);
    await greet(pool, outbox, 'committed', true);
    const log = app.get(GreetingLog);
    const deadline = Date.now() + 30_000;
    const readRows = async () => (await pool.query('SELECT aggregate_id, destination, status FROM outbox_messages ORDER BY position')).rows;
    // Received, then settled: the relay marks the row published a moment after the transport has it.
    let rows = await readRows();
    while ((!log.received.some((event) => event.aggregateId === 'committed') || rows.some((row) => row.status === 'pending')) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      rows = await readRows();
    }
    // The TypeORM packages in this process (none: the app does not have them).
    const loaded = [...new Set(Object.keys(require.cache).flatMap((file) => /node_modules[\\/](typeorm|@nestjs[\\/]typeorm)[\\/]/.exec(file)?.[1] ?? []))];
    console.log(JSON.stringify({ received: log.received, rows, loaded }));
  } finally {
    await app.close();
    await pool.end();
  }
}

void main();
