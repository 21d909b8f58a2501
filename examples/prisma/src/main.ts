import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { settings } from './settings.js';

const app = await NestFactory.create(AppModule);
app.enableShutdownHooks(); // the relay finishes its batch before the pool closes
await app.listen(settings.httpPort);
