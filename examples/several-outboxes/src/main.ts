import { NestFactory } from '@nestjs/core';
import { enableBoundedShutdown } from '@nest-outbox/outbox';
import { AppModule } from './app.module.js';
import { settings } from './settings.js';

async function bootstrap() {
  const app = await NestFactory.create(AppModule);
  // On SIGTERM/SIGINT every relay finishes its batch before the databases close.
  enableBoundedShutdown(app);
  await app.listen(settings.httpPort);
}
await bootstrap();
