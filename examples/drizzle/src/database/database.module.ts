import { Global, Module, type OnApplicationShutdown } from '@nestjs/common';
import { db, pool } from './database.js';

export const DRIZZLE = Symbol('DRIZZLE');

@Global()
@Module({ providers: [{ provide: DRIZZLE, useValue: db }], exports: [DRIZZLE] })
export class DatabaseModule implements OnApplicationShutdown {
  // The outbox never ends a pool it was given; its relay has stopped by now (beforeApplicationShutdown).
  async onApplicationShutdown(): Promise<void> {
    await pool.end();
  }
}
