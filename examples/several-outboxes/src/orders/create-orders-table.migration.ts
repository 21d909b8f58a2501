import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

// The app's own table in the eu and us databases, beside the outbox table of CreateOutboxTable.
export class CreateOrdersTable1767225600000 implements MigrationInterface {
  name = 'CreateOrdersTable1767225600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'orders',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'region', type: 'varchar', length: '8' },
          { name: 'totalCents', type: 'integer' },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('orders');
  }
}
