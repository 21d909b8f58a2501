import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { OutboxWriteError } from '../core/outbox.errors';
import { noAmbientTransaction } from '../core/outbox.messages';
import type { OutboxMessageInput, TypeOrmOutboxWriter } from '../typeorm/typeorm-outbox.writer';
import { AmbientTransactionResolver } from './ambient/ambient-transaction.resolver';
import { OUTBOX_WRITER } from './outbox.constants';

/** Adds messages to the outbox inside a transaction you already have, without an aggregate. */
@Injectable()
export class OutboxPublisher {
  constructor(
    @Inject(OUTBOX_WRITER) private readonly writer: TypeOrmOutboxWriter,
    private readonly ambient: AmbientTransactionResolver,
  ) {}

  /**
   * Writes the messages through `manager`, so they commit or roll back with its transaction.
   * Resolves with the message ids. Throws if `manager` is not inside a transaction.
   */
  add(manager: EntityManager, messages: OutboxMessageInput | OutboxMessageInput[]): Promise<string[]>;
  /**
   * Writes the messages in the ambient transaction: inside a `@Transactional()` method of
   * `@nestjs-cls/transactional` or `typeorm-transactional`. Throws when there is none.
   */
  add(messages: OutboxMessageInput | OutboxMessageInput[]): Promise<string[]>;
  add(
    managerOrMessages: EntityManager | OutboxMessageInput | OutboxMessageInput[],
    messages?: OutboxMessageInput | OutboxMessageInput[],
  ): Promise<string[]> {
    if (isEntityManager(managerOrMessages)) return this.writer.add(managerOrMessages, messages ?? []);
    const manager = this.ambient.current();
    if (!manager) return Promise.reject(new OutboxWriteError(noAmbientTransaction()));
    return this.writer.add(manager, managerOrMessages);
  }
}

// By shape rather than instanceof: an app may load its own copy of typeorm.
function isEntityManager(value: unknown): value is EntityManager {
  const candidate = value as Partial<EntityManager> | undefined;
  return typeof candidate?.transaction === 'function' && typeof candidate.query === 'function' && candidate.connection !== undefined;
}
