import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { eventsConsumer } from './events.options.js';
import { settings } from './settings.js';

async function bootstrap() {
  const app = await NestFactory.create(AppModule);
  app.connectMicroservice(eventsConsumer());
  app.enableShutdownHooks(); // the relay finishes its batch before the database closes
  await app.startAllMicroservices();
  await app.listen(settings.httpPort);
}
await bootstrap();
