import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { migrateDatabase } from './database/database.js';
import { settings } from './settings.js';

await migrateDatabase(); // the tables exist before the relay's first claim
const app = await NestFactory.create(AppModule);
app.enableShutdownHooks(); // the relay finishes its batch before the pool ends
await app.listen(settings.httpPort);
