import { join } from 'node:path';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreateOutboxTable } from '@nest-outbox/outbox';
import { PARCEL_ENTITIES } from './parcel.fixtures';

/**
 * TypeORM on a SQLite file in `dir` with the parcel entities and the outbox migration: the
 * database of tests about a transport or the relay's timing, where the database is not the subject.
 */
export function parcelsOnSqlite(dir: string): ReturnType<typeof TypeOrmModule.forRoot> {
  return TypeOrmModule.forRoot({
    type: 'better-sqlite3',
    database: join(dir, 'db.sqlite'),
    entities: PARCEL_ENTITIES,
    synchronize: true,
    autoLoadEntities: true,
    migrations: [CreateOutboxTable],
    migrationsRun: true,
  });
}
