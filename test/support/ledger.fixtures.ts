import { randomUUID } from 'node:crypto';
import { AggregateRoot } from '@nestjs/cqrs';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { OutboxEvent, PublishesEvents } from '@nest-outbox/outbox';

@OutboxEvent('ledger.entry-booked')
export class EntryBooked {
  constructor(
    readonly ledgerId: string,
    readonly amountCents: number,
  ) {}
}

/** A @nestjs/cqrs aggregate whose only outbox-specific part is the decorator. */
@PublishesEvents({ aggregateType: 'ledger', topic: 'ledgers' })
@Entity('ledgers')
export class Ledger extends AggregateRoot {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string = randomUUID();

  @Column({ type: 'integer' })
  balanceCents: number = 0;

  book(amountCents: number): void {
    this.apply(new EntryBooked(this.id, amountCents));
  }

  // Called by apply(): cqrs' own event-handler convention.
  onEntryBooked(event: EntryBooked): void {
    this.balanceCents += event.amountCents;
  }
}
