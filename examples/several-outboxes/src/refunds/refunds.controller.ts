import { Controller, Inject, Param, Post } from '@nestjs/common';
import type { Pool } from 'pg';
import { LATAM_POOL } from './latam.pool.js';
import { Refunds } from './refunds.js';

@Controller('refunds')
export class RefundsController {
  constructor(
    @Inject(LATAM_POOL) private readonly pool: Pool,
    private readonly refunds: Refunds,
  ) {}

  /** `POST /refunds/:orderId`: the refund and its event in one transaction on the latam database. */
  @Post(':orderId')
  async refund(@Param('orderId') orderId: string): Promise<{ orderId: string }> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await this.refunds.refund(client, orderId);
      await client.query('COMMIT');
      return { orderId };
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }
}
