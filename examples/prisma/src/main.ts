import { NestFactory } from '@nestjs/core';
import { enableBoundedShutdown } from '@nest-outbox/outbox';
import { AppModule } from './app.module.js';
import { settings } from './settings.js';

const app = await NestFactory.create(AppModule);
// On SIGTERM/SIGINT the relay finishes its batch before the pool closes; a close that hangs ends after 10 s, saying on what.
enableBoundedShutdown(app);
await app.listen(settings.httpPort);
