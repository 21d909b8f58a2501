import { Injectable } from '@nestjs/common';
import { OutboxNonRetryableError, OnOutboxEvent, type OutboxEnvelope } from '@nest-outbox/outbox';
import { isolatedDatabase, type TestDatabase } from '../support/outbox-harness';
import { ParcelRegistered } from '../support/parcel.fixtures';
import { waitFor } from '../support/wait-for';
import { startHandlersApp } from './in-process.harness';

interface Step {
  seq: number;
  poison?: boolean;
  fatal?: boolean;
  failOnce?: boolean;
  hang?: boolean;
  refused?: boolean;
}

/** What the handlers did, shared across app restarts. */
class Journal {
  readonly done: Array<{ handler: string; aggregateId: string; seq: number; id: string }> = [];
  readonly attempts = new Map<string, number>();
  releaseHung: () => void = () => undefined;
  readonly hung = new Promise<void>((resolve) => (this.releaseHung = resolve));
  hangEnabled = true;

  async handle(handler: string, envelope: OutboxEnvelope): Promise<void> {
    const step = envelope.payload as Step;
    const key = `${handler}:${envelope.id}`;
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    if (step.fatal) throw new OutboxNonRetryableError(`cannot ever handle ${envelope.id}`);
    if (step.refused) throw new RangeError(`out of range ${envelope.id}`);
    if (step.poison && handler === 'parcels.count') throw new Error(`poison ${envelope.id}`);
    if (step.failOnce && attempt === 1) throw new Error(`transient ${envelope.id}`);
    if (step.hang && this.hangEnabled) await this.hung;
    this.done.push({ handler, aggregateId: envelope.aggregateId, seq: step.seq, id: envelope.id });
  }

  handled(handler: string, aggregateId?: string): number[] {
    return this.done.filter((entry) => entry.handler === handler && (!aggregateId || entry.aggregateId === aggregateId)).map((entry) => entry.seq);
  }
}

const journal = { current: new Journal() };

@Injectable()
class ParcelHandlers {
  @OnOutboxEvent(ParcelRegistered, { name: 'parcels.count' })
  count(envelope: OutboxEnvelope) {
    return journal.current.handle('parcels.count', envelope);
  }

  @OnOutboxEvent('parcels.parcel-registered', { name: 'parcels.audit' })
  audit(envelope: OutboxEnvelope) {
    return journal.current.handle('parcels.audit', envelope);
  }
}

@Injectable()
class TwinHandlers {
  @OnOutboxEvent('parcels.parcel-registered', { name: 'parcels.count' })
  again() {}
}

@Injectable()
class TypoHandlers {
  @OnOutboxEvent('parcels.parcel-registred', { name: 'parcels.typo' })
  typo() {}
}

describe.each<TestDatabase>(['postgres', 'sqlite'])('in-process handlers on %s', (database) => {
  let isolated: Awaited<ReturnType<typeof isolatedDatabase>>;
  let app: Awaited<ReturnType<typeof startHandlersApp>> | undefined;

  beforeEach(async () => {
    journal.current = new Journal();
    isolated = await isolatedDatabase(database);
  });
  afterEach(async () => {
    journal.current.releaseHung();
    await app?.close();
    app = undefined;
    await isolated.drop();
  });

  it('runs every handler for every event, in order per aggregate, retries included', async () => {
    app = await startHandlersApp(isolated.options, [ParcelHandlers]);
    for (const aggregate of ['a', 'b', 'c']) {
      await app.add(aggregate, [{ seq: 0 }, { seq: 1, failOnce: true }, { seq: 2 }, { seq: 3, failOnce: true }]);
    }
    await waitFor('all 24 handler runs', () => journal.current.done.length === 24);
    for (const aggregate of ['a', 'b', 'c']) {
      expect(journal.current.handled('parcels.count', aggregate)).toEqual([0, 1, 2, 3]);
      expect(journal.current.handled('parcels.audit', aggregate)).toEqual([0, 1, 2, 3]);
    }
    const rows = await app.rows();
    expect(rows).toHaveLength(24);
    expect(new Set(rows.map((row) => `${row.transport}/${row.destination}`))).toEqual(new Set(['in-process/parcels.count', 'in-process/parcels.audit']));
    await waitFor('every row published', async () => (await app!.rows()).every((row) => row.status === 'published'));
  });

  it('sends a handler row dead after maxAttempts while the other handler of the event succeeds', async () => {
    app = await startHandlersApp(isolated.options, [ParcelHandlers]);
    const [poisonForCount, poisonForAudit] = await app.add('p', [{ seq: 0, poison: true }]);
    expect(poisonForAudit).toBeDefined();
    await waitFor('the count row dead', async () => (await app!.rows()).find((row) => row.id === poisonForCount && row.status === 'dead'));
    const rows = await app.rows();
    expect(rows.find((row) => row.destination === 'parcels.count')).toMatchObject({ status: 'dead', attempts: 3, lastError: expect.stringMatching(/^poison /) });
    expect(rows.find((row) => row.destination === 'parcels.audit')).toMatchObject({ status: 'published', attempts: 1 });
  });

  it('sends a row dead after one attempt when the handler throws OutboxNonRetryableError, keeping the error', async () => {
    app = await startHandlersApp(isolated.options, [ParcelHandlers]);
    await app.add('f', [{ seq: 0, fatal: true }]);
    await waitFor('both rows dead', async () => (await app!.rows()).every((row) => row.status === 'dead'));
    for (const row of await app.rows()) expect(row).toMatchObject({ attempts: 1, lastError: expect.stringMatching(/^cannot ever handle /) });
  });

  it('asks the retryIf option about other errors: false sends the row to dead at once', async () => {
    app = await startHandlersApp(isolated.options, [ParcelHandlers], { retryIf: (error) => !(error instanceof RangeError) });
    await app.add('q', [{ seq: 0, refused: true }]);
    await waitFor('both rows dead', async () => (await app!.rows()).every((row) => row.status === 'dead'));
    for (const row of await app.rows()) expect(row).toMatchObject({ attempts: 1, lastError: expect.stringMatching(/^out of range /) });
  });

  it('loses nothing when the app stops mid-run and another instance takes over', async () => {
    app = await startHandlersApp(isolated.options, [ParcelHandlers]);
    const events = Array.from({ length: 10 }, (_, seq) => ({ seq, hang: seq === 4 }));
    await app.add('r', events);
    await waitFor('the first instance to reach the hung event', () => journal.current.handled('parcels.count', 'r').length === 4);
    await app.close();
    app = undefined;
    const before = journal.current.handled('parcels.count', 'r');
    expect(before).toEqual([0, 1, 2, 3]);

    journal.current.hangEnabled = false;
    app = await startHandlersApp(isolated.options, [ParcelHandlers]);
    await waitFor('every event handled by the second instance', () => journal.current.handled('parcels.count', 'r').length === 10);
    expect(journal.current.handled('parcels.count', 'r')).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await waitFor('every audit run', () => new Set(journal.current.handled('parcels.audit', 'r')).size === 10);
  });

  it('refuses a handler name used twice, naming both handlers', async () => {
    await expect(startHandlersApp(isolated.options, [ParcelHandlers, TwinHandlers])).rejects.toThrow(
      /handler name "parcels\.count" is used by both ParcelHandlers\.count and TwinHandlers\.again/,
    );
  });

  it('refuses an event type no @OutboxEvent class declares, naming it and the handler', async () => {
    await expect(startHandlersApp(isolated.options, [TypoHandlers])).rejects.toThrow(
      /@OnOutboxEvent\('parcels\.parcel-registred'\) on TypoHandlers\.typo: no @OutboxEvent class declares the event type "parcels\.parcel-registred"[^]*"parcels\.parcel-registered"/,
    );
  });
});
