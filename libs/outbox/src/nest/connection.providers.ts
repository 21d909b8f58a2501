import { Logger, type Provider } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { openConnection, type OpenedConnection } from '../adapters/connection/open-connection';
import type { ConnectionTarget } from '../adapters/connection/outbox-connection.options';
import { guardTypeOrmPools } from '../typeorm/typeorm-pool.guard';
import { TypeOrmSqlConnection } from '../typeorm/typeorm-sql.connection';
import { loadTypeOrmMode } from './typeorm-mode.loader';

/**
 * A module's data source and the connection its stores run on. With `connection` (a target) there
 * is no data source (null: nothing of TypeORM is registered), and the pool is opened when the module
 * is instantiated; without, both come from the app's TypeORM data source, which TypeORM's module closes
 * (and `moduleName` is named in the error when typeorm or @nestjs/typeorm is not installed).
 */
export function connectionProviders(moduleName: string, tokens: { dataSource: symbol; connection: symbol }, dataSourceName: string | undefined, target: ConnectionTarget | undefined): Provider[] {
  if (target) return [{ provide: tokens.dataSource, useValue: null }, { provide: tokens.connection, useFactory: (): OpenedConnection => openConnection(target, { logger: new Logger('Outbox') }) }];
  const { getDataSourceToken } = loadTypeOrmMode(moduleName);
  return [
    { provide: tokens.dataSource, useExisting: getDataSourceToken(dataSourceName) },
    {
      provide: tokens.connection,
      inject: [tokens.dataSource],
      useFactory: (dataSource: DataSource): OpenedConnection => {
        // The relay borrows the app's pool all the time: an error on one of its connections must not end the app.
        guardTypeOrmPools(dataSource, new Logger('Outbox'));
        return { connection: new TypeOrmSqlConnection(dataSource), close: async () => undefined };
      },
    },
  ];
}
