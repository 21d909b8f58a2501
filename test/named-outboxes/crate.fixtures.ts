import { randomUUID } from 'node:crypto';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { OutboxAggregateRoot, OutboxEvent, PublishesEvents } from '@nest-outbox/outbox';

@OutboxEvent('depots.crate-moved')
export class CrateMoved {
  constructor(
    readonly crateId: string,
    readonly step: number,
    readonly depot: string,
  ) {}
}

/** An aggregate with no topic of its own: each outbox's `resolveTopic` sends it to that outbox's topic. */
@PublishesEvents({ aggregateType: 'crate' })
@Entity('crates')
export class Crate extends OutboxAggregateRoot {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string = randomUUID();

  @Column({ type: 'integer' })
  steps: number = 0;

  @Column({ type: 'varchar', length: 40 })
  depot: string;

  static at(depot: string): Crate {
    const crate = new Crate();
    crate.depot = depot;
    crate.move();
    return crate;
  }

  /** One event per save: the consumer checks each crate's steps arrive 1, 2, 3, … */
  move(): void {
    this.steps += 1;
    this.recordEvent(new CrateMoved(this.id, this.steps, this.depot));
  }
}
