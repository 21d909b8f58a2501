import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { DataSource, EntityManager } from 'typeorm';
import { findOptionalPeer } from '../../core/optional-peer';
import { OUTBOX_DATA_SOURCE } from '../outbox.constants';

/** The part of @nestjs-cls/transactional's TransactionHost used here. */
interface ClsTransactionHost {
  isTransactionActive(): boolean;
  readonly tx: unknown;
}

/**
 * Finds the transaction the caller is inside without being handed its EntityManager:
 * - `@nestjs-cls/transactional` (TypeORM adapter): the app's `TransactionHost`, when it has one;
 * - `typeorm-transactional` (and anything else that swaps `DataSource.manager` inside
 *   `@Transactional()`): the data source's manager, when it is inside a transaction.
 * Neither package is imported unless present: both are optional.
 */
@Injectable()
export class AmbientTransactionResolver {
  private clsHost: ClsTransactionHost | null | undefined;

  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(OUTBOX_DATA_SOURCE) private readonly dataSource: DataSource | null,
  ) {}

  /** The EntityManager of the ambient transaction on the outbox's data source, or undefined. */
  current(): EntityManager | undefined {
    // With `connection`, no TypeORM transaction can carry the outbox's rows.
    if (!this.dataSource) return undefined;
    const host = this.transactionHost();
    if (host?.isTransactionActive()) {
      const tx = host.tx as EntityManager | undefined;
      // A TransactionHost of another data source cannot carry the outbox's rows.
      if (tx?.connection === this.dataSource && tx.queryRunner?.isTransactionActive) return tx;
    }
    const manager = this.dataSource.manager;
    return manager.queryRunner?.isTransactionActive ? manager : undefined;
  }

  private transactionHost(): ClsTransactionHost | undefined {
    if (this.clsHost === undefined) this.clsHost = this.findTransactionHost() ?? null;
    return this.clsHost ?? undefined;
  }

  private findTransactionHost(): ClsTransactionHost | undefined {
    const token = findOptionalPeer<{ TransactionHost?: unknown }>('@nestjs-cls/transactional')?.TransactionHost;
    if (token === undefined) return undefined; // not installed: nothing to look for
    try {
      return this.moduleRef.get(token as never, { strict: false }) as ClsTransactionHost;
    } catch {
      return undefined; // installed but the app did not register ClsPluginTransactional
    }
  }
}
