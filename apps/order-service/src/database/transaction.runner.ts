import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

/**
 * Runs a unit of work in a transaction. TypeORM drives SQLite through one shared connection,
 * where two overlapping transactions would silently nest; there, units of work run one at a time.
 */
@Injectable()
export class TransactionRunner {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (this.dataSource.options.type !== 'better-sqlite3') return this.dataSource.transaction(work);
    const result = this.queue.then(() => this.dataSource.transaction(work));
    this.queue = result.catch(() => undefined);
    return result;
  }
}
