import { NestFactory } from '@nestjs/core';
import { enableBoundedShutdown } from '@nest-outbox/outbox';
import { AppModule } from './app.module.js';
import { eventsConsumer } from './events.options.js';
import { settings } from './settings.js';

async function bootstrap() {
  const app = await NestFactory.create(AppModule);
  app.connectMicroservice(eventsConsumer());
  // On SIGTERM/SIGINT the relay finishes its batch before the database closes; a close that hangs ends after 10 s, saying on what.
  enableBoundedShutdown(app);
  await app.startAllMicroservices();
  await app.listen(settings.httpPort);
}
await bootstrap();
