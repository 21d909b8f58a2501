/**
 * The demo order service in a process of its own, so that a test can restart its database under it
 * and see the process end if an error goes unhandled. Reports `{ t: 'ready', port }` to its parent
 * over IPC once it serves HTTP. Settings in ORDER_SERVICE_CHILD: an OrderServiceConfig as JSON.
 */
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { createOrderServiceApp, serveOrderService } from '../../apps/order-service/src/bootstrap';
import type { OrderServiceConfig } from '../../apps/order-service/src/config/order-service.config';

const config = JSON.parse(process.env.ORDER_SERVICE_CHILD ?? '{}') as OrderServiceConfig;

// Never outlive the test that started it.
process.on('disconnect', () => process.exit(3));

async function main(): Promise<void> {
  const app = await createOrderServiceApp(config, ['log', 'warn', 'error']);
  await serveOrderService(app, 0);
  const { port } = app.getHttpServer().address() as AddressInfo;
  process.send?.({ t: 'ready', port });
}

main().catch((error: unknown) => {
  process.send?.({ t: 'failed', text: error instanceof Error ? error.stack : String(error) });
  process.exit(1);
});
