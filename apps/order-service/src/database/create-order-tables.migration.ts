import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/** The demo's own tables, written with TypeORM's portable schema API. */
export class CreateOrderTables1767225600001 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const integerId = queryRunner.connection.options.type === 'postgres' ? 'int' : 'integer';
    await queryRunner.createTable(
      new Table({
        name: 'orders',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'customerId', type: 'varchar', length: '64' },
          { name: 'status', type: 'varchar', length: '16' },
          { name: 'totalCents', type: 'integer' },
          { name: 'createdAt', type: queryRunner.connection.options.type === 'postgres' ? 'timestamp' : 'datetime', default: 'CURRENT_TIMESTAMP' },
          { name: 'version', type: 'integer' },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'order_lines',
        columns: [
          { name: 'id', type: integerId, isPrimary: true, isGenerated: true, generationStrategy: 'increment' },
          { name: 'orderId', type: 'varchar', length: '36', isNullable: true },
          { name: 'sku', type: 'varchar', length: '64' },
          { name: 'quantity', type: 'integer' },
          { name: 'unitPriceCents', type: 'integer' },
        ],
        foreignKeys: [{ columnNames: ['orderId'], referencedTableName: 'orders', referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('order_lines');
    await queryRunner.dropTable('orders');
  }
}
