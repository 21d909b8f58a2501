import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

// The app's own tables, created by a migration rather than `synchronize` (which may drop columns
// it does not know): the same class runs on SQLite and PostgreSQL.
export class CreateShopTables1767225600000 implements MigrationInterface {
  name = 'CreateShopTables1767225600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'orders',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'customerId', type: 'varchar', length: '64' },
          { name: 'totalCents', type: 'integer' },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'shipments',
        columns: [
          { name: 'orderId', type: 'varchar', length: '36', isPrimary: true },
          { name: 'customerId', type: 'varchar', length: '64' },
          { name: 'createdAt', type: queryRunner.connection.options.type === 'postgres' ? 'timestamp' : 'datetime', default: 'CURRENT_TIMESTAMP' },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('shipments');
    await queryRunner.dropTable('orders');
  }
}
