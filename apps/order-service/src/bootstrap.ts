import { ValidationPipe, type INestApplication, type LogLevel } from '@nestjs/common';
import { HttpAdapterHost, NestFactory } from '@nestjs/core';
import { OutboxRelayHost } from '@nest-outbox/outbox';
import { AppModule } from './app.module';
import { orderEventsConsumer } from './broker.options';
import type { OrderServiceConfig } from './config/order-service.config';
import { correlationMiddleware } from './correlation/correlation.context';
import { traceContextMiddleware } from './operations/trace-context.middleware';
import { DataSource } from 'typeorm';
import { ConnectionLossClock } from './http/connection-loss.clock';
import { DatabaseUnavailableFilter } from './http/database-unavailable.filter';
import { JsonDepthPipe } from './http/json-depth.pipe';
import { ConsumerReadiness } from './operations/consumer-readiness';

/** Builds the order service (HTTP API + event consumer) without starting it; shared by main.ts and the tests. */
export async function createOrderServiceApp(config: OrderServiceConfig, logger: false | LogLevel[] = ['log', 'warn', 'error']): Promise<INestApplication> {
  const app = await NestFactory.create(AppModule.register(config), { logger });
  app.use(traceContextMiddleware);
  app.use(correlationMiddleware);
  // whitelist + forbidNonWhitelisted: an unknown field is a 400 too, and nothing is written.
  app.useGlobalPipes(new JsonDepthPipe(), new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  app.useGlobalFilters(new DatabaseUnavailableFilter(app.get(HttpAdapterHost).httpAdapter, ConnectionLossClock.watching(app.get(DataSource))));
  // The filter and pipes above are HTTP's. Inherited by the consumer, the HTTP filter answered a
  // handler's error by writing an HTTP reply to the Kafka context, which stopped the consumer for
  // good; without them a handler error is retried by the broker until the inbox's poison policy
  // sets the message aside.
  app.connectMicroservice(orderEventsConsumer(config.broker), { inheritAppConfig: false });
  // Signals are main.ts's (enableBoundedShutdown): the tests build many apps in one process and close them themselves.
  return app;
}

/**
 * HTTP first: orders are taken while the consumer joins its broker (a Kafka group join takes
 * seconds, longer after a crash, and the broker may be down at start); the outbox holds their events
 * until they are delivered. `/health/consumer` says when the consumer has joined.
 */
export async function serveOrderService(app: INestApplication, port: number): Promise<void> {
  await app.listen(port, '127.0.0.1');
  const readiness = app.get(ConsumerReadiness);
  readiness.follow(app.getMicroservices());
  const consumers = app.startAllMicroservices();
  readiness.track(consumers);
  startRelayWhenListening(app, consumers);
}

/**
 * Over TCP (`relayStart: 'manual'`) the relay starts once the consumer's listener is up; elsewhere
 * it runs already and `start()` does nothing. A listener that failed is reported by
 * `/health/consumer`, and the events wait in the outbox.
 */
export function startRelayWhenListening(app: INestApplication, consumers: Promise<unknown>): void {
  consumers.then(() => app.get(OutboxRelayHost).start(), () => undefined);
}
