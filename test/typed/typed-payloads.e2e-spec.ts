import { IsInt, IsString, Min, MinLength, ValidateNested } from 'class-validator';
import { Type } from 'class-transformer';
import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import {
  OutboxAggregateRoot,
  OutboxEvent,
  OutboxPublisher,
  PublishesEvents,
  toOutboxEvent,
} from '@nest-outbox/outbox';
import { outboxMessageEntity } from '@nest-outbox/outbox/typeorm';
import { startCapturingApp, type CapturingApp } from '../support/capturing-app';
import type { TestDatabase } from '../support/outbox-harness';

class InvoiceLine {
  @IsString()
  @MinLength(1)
  sku!: string;

  @IsInt()
  @Min(1)
  quantity!: number;
}

@OutboxEvent('billing.invoice-issued', {
  version: 2,
  validate: true,
  // v1 carried the amount in euros as a string; v2 carries integer cents.
  upcast: ({ version, payload }) => (version === 1 ? { ...(payload as object), amountCents: Math.round(Number((payload as { amount: string }).amount) * 100) } : payload),
})
class InvoiceIssued {
  @IsString()
  invoiceId!: string;

  @IsInt()
  @Min(0)
  amountCents!: number;

  @ValidateNested({ each: true })
  @Type(() => InvoiceLine)
  lines!: InvoiceLine[];

  static of(invoiceId: string, amountCents: number, lines: Array<Partial<InvoiceLine>>): InvoiceIssued {
    return Object.assign(new InvoiceIssued(), { invoiceId, amountCents, lines: lines.map((line) => Object.assign(new InvoiceLine(), line)) });
  }
}

@PublishesEvents({ aggregateType: 'invoice', topic: 'billing' })
@Entity('typed_invoices')
class Invoice extends OutboxAggregateRoot {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ type: 'integer' })
  amountCents!: number;
}

describe.each<TestDatabase>(['sqlite', 'postgres'])('typed payloads on %s', (database) => {
  let app: CapturingApp;
  let dataSource: DataSource;

  beforeAll(async () => {
    app = await startCapturingApp(database, { entities: [Invoice] });
    dataSource = app.dataSource;
  });
  afterAll(() => app?.close());

  const outboxRows = () => dataSource.getRepository(outboxMessageEntity()).count();

  it('fails the save of an aggregate whose event payload is invalid, naming the fields; nothing is committed', async () => {
    const invoice = Object.assign(new Invoice(), { id: 'inv-bad', amountCents: -5 });
    invoice.recordEvent(InvoiceIssued.of('inv-bad', -5, [{ sku: '', quantity: 1 }]));
    await expect(dataSource.transaction((manager) => manager.save(invoice))).rejects.toThrow(
      /Event "billing\.invoice-issued" cannot be written to the outbox: its payload fails validation: "amountCents" \(amountCents must not be less than 0\); "lines\.0\.sku" \(sku must be longer than or equal to 1 characters\)/,
    );
    expect(await dataSource.getRepository(Invoice).count()).toBe(0);
    expect(await outboxRows()).toBe(0);
  });

  it('fails the explicit API the same way, and writes a valid payload', async () => {
    const publisher = app.module.get(OutboxPublisher);
    await expect(
      dataSource.transaction(async (manager) => {
        await manager.save(Object.assign(new Invoice(), { id: 'inv-plain', amountCents: 100 }));
        await publisher.add(manager, { type: 'billing.invoice-issued', version: 2, aggregateType: 'invoice', aggregateId: 'inv-plain', topic: 'billing', payload: { invoiceId: 'inv-plain', amountCents: 'ten', lines: [] } });
      }),
    ).rejects.toThrow(/"amountCents" \(amountCents must not be less than 0, amountCents must be an integer number\)/);
    expect(await dataSource.getRepository(Invoice).count()).toBe(0);

    const good = Object.assign(new Invoice(), { id: 'inv-good', amountCents: 1250 });
    good.recordEvent(InvoiceIssued.of('inv-good', 1250, [{ sku: 'BOOK', quantity: 2 }]));
    await dataSource.transaction((manager) => manager.save(good));
    expect(await outboxRows()).toBe(1);
  });

  it('reads a stored envelope back as a typed instance, upcasting version 1', async () => {
    const [row] = await dataSource.getRepository(outboxMessageEntity()).find();
    const event = toOutboxEvent(InvoiceIssued, { type: row.eventType, version: row.eventVersion, payload: JSON.parse(row.payload) });
    expect(event).toBeInstanceOf(InvoiceIssued);
    expect(event.lines[0]).toBeInstanceOf(InvoiceLine);
    expect(event).toMatchObject({ invoiceId: 'inv-good', amountCents: 1250 });
    const old = toOutboxEvent(InvoiceIssued, { type: 'billing.invoice-issued', version: 1, payload: { invoiceId: 'old', amount: '12.50', lines: [] } });
    expect(old.amountCents).toBe(1250);
    expect(() => toOutboxEvent(InvoiceIssued, { type: 'billing.invoice-issued', version: 2, payload: { invoiceId: 'x', amountCents: 1.5, lines: [] } })).toThrow(
      /Received event "billing\.invoice-issued" has an invalid payload: "amountCents" \(amountCents must be an integer number\)/,
    );
    expect(() => toOutboxEvent(InvoiceIssued, { type: 'billing.invoice-issued', version: 3, payload: {} })).toThrow(/version 3, but this code knows versions up to 2/);
    expect(() => toOutboxEvent(InvoiceIssued, { type: 'billing.invoice-paid', version: 2, payload: {} })).toThrow(/Expected an outbox envelope of type "billing\.invoice-issued", got "billing\.invoice-paid"/);
  });
});
