import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/** The consumer's side effect: one timeline entry per order event, written through the inbox. */
export class CreateOrderTimeline1767225600002 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'order_timeline',
        columns: [
          { name: 'messageId', type: 'varchar', length: '36', isPrimary: true },
          { name: 'orderId', type: 'varchar', length: '36' },
          { name: 'eventType', type: 'varchar', length: '255' },
          { name: 'occurredAt', type: 'varchar', length: '32' },
        ],
        indices: [{ columnNames: ['orderId'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('order_timeline');
  }
}
