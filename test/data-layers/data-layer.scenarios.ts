import { randomUUID } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { OutboxDataLayerInbox, OutboxWriteError, type OutboxDataLayerTransaction, type OutboxMessageInput, type OutboxPublisher } from '@nest-outbox/outbox';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { inboxDialectFor } from '../../libs/outbox/src/sql/inbox/inbox-sql.dialect';
import { lockBucket } from '../../libs/outbox/src/sql/dialects/aggregate-lock-buckets.sql';
import { toSqlTransaction } from '../../libs/outbox/src/adapters/data-layer-transaction';
import type { EntityManager } from 'typeorm';
import { holdTransaction } from '../support/held-transaction';
import { createOutboxHarness, type OutboxHarness } from '../support/outbox-harness';
import { MARIADB_LOCK_WAITS, POSTGRES_LOCK_WAITS, waitForLockWait, type LockWaits } from '../support/lock-waits';

/** A data layer opened on the test's private PostgreSQL schema or MariaDB database. */
export interface OpenDataLayer {
  /** The README example of this layer: an invoice row and its event in one transaction of the layer. */
  issueInvoice(outbox: OutboxPublisher, id: string, correlationId: string): Promise<void>;
  /** Runs `work` in a transaction of the layer's own API: commits unless `work` throws. */
  inTransaction(work: (tx: OutboxDataLayerTransaction) => Promise<void>): Promise<void>;
  /** An object of this layer that is not inside a transaction, which `add` must refuse. */
  outsideTransaction: object;
  close(): Promise<void>;
}

export interface DataLayerSubject {
  name: string;
  /** Opens the layer on `url`; on PostgreSQL with `schema` first on its connections' search_path. */
  open(database: { url: string; schema: string }): Promise<OpenDataLayer>;
}

export type ScenarioDatabase = 'postgres' | 'mariadb';

/** What differs between the two server databases in these scenarios: placeholders, DDL and how a lock wait shows. */
const DATABASES: Record<ScenarioDatabase, { label: string; p: (n: number) => string; invoices: string; locks: LockWaits }> = {
  postgres: { label: 'PostgreSQL', p: (n) => `$${n}`, invoices: 'CREATE TABLE invoices (id text PRIMARY KEY, status text NOT NULL)', locks: POSTGRES_LOCK_WAITS },
  mariadb: {
    label: 'MariaDB',
    p: () => '?',
    invoices: 'CREATE TABLE invoices (id varchar(64) PRIMARY KEY, status varchar(32) NOT NULL) ENGINE=InnoDB',
    locks: MARIADB_LOCK_WAITS,
  },
};

const event = (aggregateId: string, type: string, extra: Partial<OutboxMessageInput> = {}): OutboxMessageInput => ({
  type,
  aggregateType: 'invoice',
  aggregateId,
  payload: { aggregateId, type },
  topic: 'billing',
  ...extra,
});

/**
 * What every data layer's transaction must do with `OutboxPublisher.add`, on real PostgreSQL: a
 * commit writes the rows (envelope fields, positions in call order, the aggregate's lock taken), a
 * rollback writes nothing, a non-transaction is refused, and the relay publishes what committed.
 */
export function describeDataLayer(subject: DataLayerSubject, database: ScenarioDatabase = 'postgres'): void {
  const { label, p, invoices, locks } = DATABASES[database];
  describe(`OutboxPublisher.add in a ${subject.name} transaction, on ${label}`, () => {
    let harness: OutboxHarness;
    let layer: OpenDataLayer;
    const committed: string[] = [];
    const rolledBack: string[] = [];
    // A table name of its own, so that its statements are this test's alone in pg_stat_activity.
    const inboxTable = `inbox_${randomBytes(4).toString('hex')}`;
    const inbox = new OutboxDataLayerInbox(inboxTable);

    beforeAll(async () => {
      harness = await createOutboxHarness(database);
      const options = harness.dataSource.options as { url?: string; schema?: string };
      await harness.dataSource.query(invoices);
      for (const statement of inboxDialectFor(database, inboxTable).createTable()) await harness.dataSource.query(statement);
      layer = await subject.open({ url: options.url!, schema: options.schema! });
    });

    afterAll(async () => {
      await layer?.close();
      await harness?.close();
    });

    const rowsOf = async (aggregateId: string) => (await harness.rows()).filter((row) => row.aggregateId === aggregateId);

    it('commits the invoice and its event together, with the envelope fields', async () => {
      const id = `inv-${randomUUID()}`;
      await layer.issueInvoice(harness.publisher, id, 'corr-1');
      const rows = await rowsOf(id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        eventType: 'billing.invoice-issued',
        eventVersion: 1,
        aggregateType: 'invoice',
        aggregateId: id,
        transport: 'default',
        destination: 'billing',
        correlationId: 'corr-1',
        status: 'pending',
        attempts: 0,
      });
      expect(JSON.parse(rows[0].payload)).toEqual({ id });
      expect(await harness.dataSource.query(`SELECT status FROM invoices WHERE id = ${p(1)}`, [id])).toEqual([{ status: 'issued' }]);
      committed.push(rows[0].id);
    });

    it('gives rows their positions in call order, also for adds not awaited one by one', async () => {
      const id = `inv-${randomUUID()}`;
      const types = ['e1', 'e2', 'e3', 'e4', 'e5', 'e6'];
      await layer.inTransaction(async (tx) => {
        await harness.publisher.add(tx, event(id, 'e1'));
        await harness.publisher.add(tx, [event(id, 'e2'), event(id, 'e3')]);
        await Promise.all([harness.publisher.add(tx, event(id, 'e4')), harness.publisher.add(tx, event(id, 'e5')), harness.publisher.add(tx, event(id, 'e6'))]);
      });
      const rows = await rowsOf(id);
      expect(rows.map((row) => row.eventType)).toEqual(types);
      const positions = rows.map((row) => BigInt(row.position));
      expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      committed.push(...rows.map((row) => row.id));
    });

    it('writes nothing when the transaction rolls back', async () => {
      const id = `inv-${randomUUID()}`;
      const boom = new Error('the use case failed after adding its event');
      await expect(
        layer.inTransaction(async (tx) => {
          rolledBack.push(...(await harness.publisher.add(tx, event(id, 'billing.invoice-voided'))));
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(rolledBack).toHaveLength(1);
      expect(await rowsOf(id)).toEqual([]);
    });

    it('refuses an object that is not inside a transaction, and writes nothing', async () => {
      const id = `inv-${randomUUID()}`;
      const attempt = harness.publisher.add(layer.outsideTransaction as OutboxDataLayerTransaction, event(id, 'billing.invoice-issued'));
      await expect(attempt).rejects.toThrow(OutboxWriteError);
      await expect(attempt).rejects.toThrow(/not inside a transaction/);
      expect(await rowsOf(id)).toEqual([]);
    });

    it('refuses a message without a destination before writing, and the transaction rolls back', async () => {
      const id = `inv-${randomUUID()}`;
      await expect(layer.inTransaction((tx) => harness.publisher.add(tx, event(id, 'billing.lost', { topic: undefined })).then(() => undefined))).rejects.toThrow(
        /billing\.lost/,
      );
      expect(await rowsOf(id)).toEqual([]);
    });

    // On PostgreSQL the INSERT of `add` may wait to go out with the transaction's next statement (its
    // COMMIT, usually): a statement sent after it makes it run now, and take the aggregate's lock.
    const addAndSend = async (tx: OutboxDataLayerTransaction | EntityManager, message: OutboxMessageInput) => {
      await harness.publisher.add(tx as OutboxDataLayerTransaction, message);
      await toSqlTransaction(tx).query('SELECT 1', []);
    };

    it("holds the aggregate's lock until it commits: a TypeORM add of the same aggregate waits, and comes after", async () => {
      const id = `inv-${randomUUID()}`;
      const first = await holdTransaction(layer.inTransaction, (tx) => addAndSend(tx, event(id, 'first')));
      let connection = 0;
      const second = harness.dataSource
        .transaction(async (manager) => {
          connection = await locks.connectionId(manager);
          await harness.publisher.add(manager, event(id, 'second'));
        });
      await waitForLockWait(locks, 'the TypeORM writer to wait for the lock', async () => connection !== 0 && (await locks.isWaiting(harness.dataSource, connection)));
      first.release();
      await Promise.all([first.done, second]);
      // Positions, not the order the two promises settle in: a layer may still release its client after COMMIT.
      const rows = await rowsOf(id);
      expect(rows.map((row) => row.eventType)).toEqual(['first', 'second']);
      committed.push(...rows.map((row) => row.id));
    });

    it('does not hold back another aggregate: a TypeORM add of a different invoice commits while the first transaction is open', async () => {
      const held = `inv-${randomUUID()}`;
      // On MariaDB two aggregates can share one of the 1,024 lock buckets: pick one that does not.
      let other = `inv-${randomUUID()}`;
      while (lockBucket(`invoice\u001f${other}`) === lockBucket(`invoice\u001f${held}`)) other = `inv-${randomUUID()}`;
      const first = await holdTransaction(layer.inTransaction, (tx) => harness.publisher.add(tx, event(held, 'held')));
      let secondCommitted = false;
      await harness.dataSource.transaction((manager) => harness.publisher.add(manager, event(other, 'not-held'))).then(() => (secondCommitted = true));
      expect(secondCommitted).toBe(true);
      expect((await rowsOf(other)).map((row) => row.eventType)).toEqual(['not-held']);
      first.release();
      await first.done;
      committed.push(...(await rowsOf(held)).map((row) => row.id), ...(await rowsOf(other)).map((row) => row.id));
    });

    const marks = async (messageId: string) => (await harness.dataSource.query(`SELECT consumer FROM ${inboxTable} WHERE message_id = ${p(1)}`, [messageId])).length;

    it('inbox: runs the work once per message, its writes (an outbox add here) committing with the mark', async () => {
      const envelope = { id: randomUUID(), type: 'billing.invoice-issued' };
      const id = `inv-${randomUUID()}`;
      let runs = 0;
      const deliver = async () => {
        let outcome: unknown;
        await layer.inTransaction(async (tx) => {
          outcome = await inbox.process(tx, envelope, 'shipping.ship-invoice', async () => {
            runs += 1;
            return harness.publisher.add(tx, event(id, 'shipping.shipment-opened'));
          });
        });
        return outcome;
      };
      expect(await deliver()).toMatchObject({ duplicate: false });
      expect(await deliver()).toEqual({ duplicate: true });
      expect(runs).toBe(1);
      expect(await marks(envelope.id)).toBe(1);
      const rows = await rowsOf(id);
      expect(rows.map((row) => row.eventType)).toEqual(['shipping.shipment-opened']);
      committed.push(rows[0].id);
    });

    it('inbox: a work that throws rolls the mark back with it, and the redelivery runs the work', async () => {
      const envelope = { id: randomUUID(), type: 'billing.invoice-issued' };
      const boom = new Error('the handler failed');
      await expect(layer.inTransaction((tx) => inbox.process(tx, envelope, 'shipping.ship-invoice', () => Promise.reject(boom)).then(() => undefined))).rejects.toBe(boom);
      expect(await marks(envelope.id)).toBe(0);
      let outcome: unknown;
      await layer.inTransaction(async (tx) => {
        outcome = await inbox.process(tx, envelope, 'shipping.ship-invoice', () => 'ran');
      });
      expect(outcome).toEqual({ duplicate: false, result: 'ran' });
      expect(await marks(envelope.id)).toBe(1);
    });

    it('inbox: of two concurrent deliveries the second waits for the first to commit, then skips', async () => {
      const envelope = { id: randomUUID(), type: 'billing.invoice-issued' };
      let release!: () => void;
      const mayCommit = new Promise<void>((resolve) => (release = resolve));
      let marked!: () => void;
      const hasMarked = new Promise<void>((resolve) => (marked = resolve));
      let runs = 0;
      const outcomes: unknown[] = [];
      const first = layer.inTransaction(async (tx) => {
        outcomes.push(
          await inbox.process(tx, envelope, 'shipping.ship-invoice', async () => {
            runs += 1;
            marked();
            await mayCommit;
          }),
        );
      });
      await Promise.race([hasMarked, first]);
      const second = layer.inTransaction(async (tx) => {
        outcomes.push(await inbox.process(tx, envelope, 'shipping.ship-invoice', () => void (runs += 1)));
      });
      await waitForLockWait(locks, 'the second delivery to wait on the first one’s mark', () => locks.someoneWaitsOn(harness.dataSource, inboxTable));
      release();
      await Promise.all([first, second]);
      expect(runs).toBe(1);
      expect(outcomes).toEqual([{ duplicate: false, result: undefined }, { duplicate: true }]);
      expect(await marks(envelope.id)).toBe(1);
    });

    const typeOrmHolding = (id: string) =>
      holdTransaction<EntityManager>((work) => harness.dataSource.transaction(work), (manager) => addAndSend(manager, event(id, 'first')));

    it("waits for a TypeORM transaction holding the aggregate's lock, and comes after it", async () => {
      const id = `inv-${randomUUID()}`;
      const first = await typeOrmHolding(id);
      const second = layer.inTransaction(async (tx) => void (await harness.publisher.add(tx, event(id, 'second'))));
      await waitForLockWait(locks, 'the layer to wait for the TypeORM writer', () => locks.someoneWaitsOn(harness.dataSource, 'outbox_messages'));
      first.release();
      await Promise.all([first.done, second]);
      const rows = await rowsOf(id);
      expect(rows.map((row) => row.eventType)).toEqual(['first', 'second']);
      committed.push(...rows.map((row) => row.id));
    });

    if (database === 'mariadb') {
      it('turns a lock wait past innodb_lock_wait_timeout into the OutboxWriteError naming the aggregate', async () => {
        const id = `inv-${randomUUID()}`;
        const first = await typeOrmHolding(id);
        const second = layer.inTransaction(async (tx) => {
          // Session settings outlive the transaction on a pooled connection: put it back for the tests after this one.
          const session = toSqlTransaction(tx);
          await session.execute('SET SESSION innodb_lock_wait_timeout = 1', []);
          try {
            await harness.publisher.add(tx, event(id, 'second'));
          } finally {
            await session.execute('SET SESSION innodb_lock_wait_timeout = DEFAULT', []);
          }
        });
        await expect(second).rejects.toThrow(new RegExp(`Timed out waiting for the outbox lock of "invoice ${id}"`));
        first.release();
        await first.done;
        const rows = await rowsOf(id);
        expect(rows.map((row) => row.eventType)).toEqual(['first']);
        committed.push(...rows.map((row) => row.id));
      });
    }

    it('is published by the relay: every committed message, none rolled back', async () => {
      const transport = new RecordingOutboxTransport();
      const relay = harness.relay('data-layer-relay', transport);
      await relay.trigger();
      const published = transport.published.map((message) => message.envelope.id);
      expect(published).toEqual(expect.arrayContaining(committed));
      expect(published).toHaveLength(committed.length);
      expect(published.filter((id) => rolledBack.includes(id))).toEqual([]);
      expect((await harness.rows()).every((row) => row.status === 'published')).toBe(true);
    });
  });
}
