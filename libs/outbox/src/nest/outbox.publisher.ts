import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { OutboxMessageInput, TypeOrmOutboxWriter } from '../typeorm/typeorm-outbox.writer';
import { OUTBOX_WRITER } from './outbox.constants';

/** Adds messages to the outbox inside a transaction you already have, without an aggregate. */
@Injectable()
export class OutboxPublisher {
  constructor(@Inject(OUTBOX_WRITER) private readonly writer: TypeOrmOutboxWriter) {}

  /**
   * Writes the messages through `manager`, so they commit or roll back with its transaction.
   * Resolves with the message ids. Throws if `manager` is not inside a transaction.
   */
  add(manager: EntityManager, messages: OutboxMessageInput | OutboxMessageInput[]): Promise<string[]> {
    return this.writer.add(manager, messages);
  }
}
