import './tracing/register';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { enableBoundedShutdown } from '@nest-outbox/outbox';
import { createOrderServiceApp, serveOrderService } from './bootstrap';
import { loadOrderServiceConfig } from './config/order-service.config';

async function main(): Promise<void> {
  const config = loadOrderServiceConfig();
  const app = await createOrderServiceApp(config);
  // On SIGTERM/SIGINT the app closes (the relay drains, leases go back); if a broker or the database
  // keeps the close waiting, it exits after 8 s naming what it gave up on, before `docker stop`'s 10 s SIGKILL.
  enableBoundedShutdown(app, { timeoutMs: 8_000 });
  await serveOrderService(app, config.httpPort);
  const where = config.database.type === 'better-sqlite3' ? `SQLite (${config.database.database})` : config.database.type === 'postgres' ? 'PostgreSQL' : 'MariaDB';
  new Logger('OrderService').log(
    `Listening on http://127.0.0.1:${config.httpPort} — database ${where}, events to "${config.ordersTopic}" over ${config.broker.transport}`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? `${error.name}: ${error.message}` : error);
  process.exit(1);
});
