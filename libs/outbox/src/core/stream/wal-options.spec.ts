import { OutboxConfigurationError } from '../outbox.errors';
import { resolveOutboxSettings } from '../outbox-options';
import { decodeWalRecord, encodeWalRecord } from './wal-record';

const resolve = (options: object) => resolveOutboxSettings(options, () => 'relay-1');

describe('delivery and wal options', () => {
  it("default to the table mode", () => {
    expect(resolve({}).delivery).toBe('table');
  });

  it('refuse an unknown mode and a slot name PostgreSQL would not take, naming the option', () => {
    expect(() => resolve({ delivery: 'stream' })).toThrow(OutboxConfigurationError);
    expect(() => resolve({ delivery: 'stream' })).toThrow(`"delivery": expected 'table' or 'wal'`);
    expect(() => resolve({ delivery: 'wal', wal: { slotName: 'Outbox-Slot' } })).toThrow('"wal.slotName"');
    expect(() => resolve({ delivery: 'wal', wal: { publicationName: 'x'.repeat(64) } })).toThrow('"wal.publicationName"');
    expect(() => resolve({ delivery: 'wal', wal: 'slot' })).toThrow('"wal"');
    expect(() => resolve({ delivery: 'wal', wal: { attemptsBeforeTable: 0 } })).toThrow('"wal.attemptsBeforeTable": expected an integer from 1 to 1000');
    expect(() => resolve({ delivery: 'wal', wal: { readerThread: 'thread' } })).toThrow(`"wal.readerThread": expected 'main' or 'worker'`);
    expect(resolve({ delivery: 'wal', wal: { readerThread: 'worker' } }).wal.readerThread).toBe('worker');
  });
});

describe('WAL records', () => {
  it('carry every field of the messages, in order', () => {
    const occurredAt = new Date('2026-01-02T03:04:05.000Z');
    const base = { type: 't', version: 2, aggregateType: 'a', transport: 'default', destination: 'd', occurredAt, headers: { h: 'v' }, payloadJson: '{"x":1}' };
    const decoded = decodeWalRecord(encodeWalRecord([{ ...base, id: '1', aggregateId: 'x', tenantId: 'acme' }, { ...base, id: '2', aggregateId: 'y' }]));
    expect(decoded).toEqual([
      { ...base, id: '1', aggregateId: 'x', tenantId: 'acme', occurredAt: occurredAt.toISOString(), commit: 0n, index: 0 },
      { ...base, id: '2', aggregateId: 'y', occurredAt: occurredAt.toISOString(), commit: 0n, index: 1 },
    ]);
  });

  it('refuse what the writer did not write', () => {
    expect(() => decodeWalRecord('{"v":2,"messages":[]}')).toThrow('unknown record version 2');
    expect(() => decodeWalRecord('{"v":1,"messages":[{"id":1}]}')).toThrow('"id" is not a string');
  });
});
