import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AggregateRoot, EventsHandler, type IEventHandler } from '@nestjs/cqrs';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { OutboxEvent, PublishesEvents, WithOutboxEvents } from '@nest-outbox/outbox';

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

/** A cqrs aggregate on the outbox mixin, which can both apply() and recordEvent() an event. */
@PublishesEvents({ aggregateType: 'journal', topic: 'journals' })
@Entity('journals')
export class Journal extends WithOutboxEvents(AggregateRoot) {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string = randomUUID();

  @Column({ type: 'integer' })
  balanceCents: number = 0;

  /** The same event object handed over every way there is: applied twice and recorded twice. */
  bookEverywhere(amountCents: number): EntryBooked {
    const booked = new EntryBooked(this.id, amountCents);
    this.apply(booked);
    this.recordEvent(booked, { correlationId: 'journal' });
    this.apply(booked);
    this.recordEvent(booked);
    return booked;
  }

  onEntryBooked(event: EntryBooked): void {
    this.balanceCents += event.amountCents;
  }
}

/** Collects the EntryBooked events the EventBus hands to handlers. */
@Injectable()
@EventsHandler(EntryBooked)
export class BookedEntries implements IEventHandler<EntryBooked> {
  readonly seen: EntryBooked[] = [];
  handle(event: EntryBooked): void {
    this.seen.push(event);
  }
}
