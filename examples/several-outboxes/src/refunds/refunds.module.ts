import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import { LATAM_POOL, latamPool } from './latam.pool.js';
import { RefundsController } from './refunds.controller.js';
import { Refunds } from './refunds.js';

@Module({
  providers: [latamPool, Refunds],
  controllers: [RefundsController],
})
export class RefundsModule implements OnApplicationShutdown {
  constructor(@Inject(LATAM_POOL) private readonly pool: Pool) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
