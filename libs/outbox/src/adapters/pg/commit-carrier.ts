import { findOptionalPeer } from '../../core/optional-peer';
import { OutboxWriteError } from '../../core/outbox.errors';
import { CarriedStatementsQuery, type CarriedResult, type CarriedStatement, type PgWire } from './carried-statements.query';

/** The parts of a node-postgres `Client` the carrier uses (its JavaScript client; pg-native has no `connection`). */
interface CarryingClient {
  query: (...args: unknown[]) => unknown;
  connection?: Partial<PgWire>;
  pipeline?: boolean;
  getTransactionStatus?(): string | null;
}

type Callback = (error: Error | null, result?: CarriedResult) => void;

const carriedOn = new WeakMap<object, CarriedStatement[]>();
let valueMapper: ((value: unknown) => unknown) | null | undefined;

/**
 * Holds `statement` back to be sent with the transaction's COMMIT, in the same network write,
 * behind one Sync: the save costs no round trip of its own, and a failed statement still stops the
 * COMMIT (the caller's commit rejects with its error, and nothing is committed). Any other
 * statement the client is asked to run first sends what is held, as if it had run when written,
 * and a ROLLBACK drops it. Returns false, and holds nothing, where it cannot: not node-postgres'
 * JavaScript client, its pipeline mode, no open transaction, or a named statement not yet prepared
 * on this connection (run it once the usual way, and later ones are carried).
 */
export function carryToCommit(client: object, statement: CarriedStatement): boolean {
  const candidate = client as CarryingClient;
  const wire = candidate.connection;
  const mapper = pgValueMapper();
  if (!mapper || !isWire(wire) || candidate.pipeline || candidate.getTransactionStatus?.() !== 'T') return false;
  if (statement.name !== undefined && wire.parsedStatements[statement.name] !== statement.text) return false;
  let carried = carriedOn.get(client);
  if (!carried) {
    carried = [];
    carriedOn.set(client, carried);
    interceptNextQuery(candidate, carried, mapper);
  }
  carried.push(statement);
  return true;
}

/** The statements held on `client`, for tests and diagnostics. */
export function carriedStatementsOn(client: object): readonly CarriedStatement[] {
  return carriedOn.get(client) ?? [];
}

function interceptNextQuery(client: CarryingClient, carried: CarriedStatement[], mapper: (value: unknown) => unknown): void {
  const ownQuery = Object.prototype.hasOwnProperty.call(client, 'query') ? client.query : undefined;
  const query = client.query;
  const send = (closing?: string) =>
    new Promise<CarriedResult>((resolve, reject) => {
      const submitted = new CarriedStatementsQuery(carried, closing, mapper);
      submitted.callback = (error, result) => (error ? reject(named(error, carried)) : resolve(result!));
      query.call(client, submitted);
    });
  client.query = function carrying(config: unknown, values?: unknown, callback?: unknown): unknown {
    if (ownQuery) client.query = ownQuery;
    else delete (client as Partial<CarryingClient>).query;
    carriedOn.delete(client);
    const text = textOf(config);
    const end = text === undefined ? undefined : transactionEnd(text);
    if (end === 'rollback') return query.call(client, config, values, callback);
    if (client.getTransactionStatus?.() === 'I') {
      // The transaction ended by a path that passed by `query` (nothing else ends one): what was held never ran.
      throw new OutboxWriteError(
        `${carried.length} outbox statement(s) held for this transaction's COMMIT were never sent: the transaction ended without a COMMIT through client.query(). End it with client.query('COMMIT').`,
      );
    }
    const done = typeof values === 'function' ? (values as Callback) : typeof callback === 'function' ? (callback as Callback) : undefined;
    if (end === 'commit') {
      const committed = send(text);
      if (!done) return committed;
      committed.then((result) => done(null, result), (error: Error) => done(error));
      return undefined;
    }
    const sent = send();
    if (done || text === undefined) {
      // A callback or a submittable (a cursor) is queued behind what is held, in order; should that
      // fail, the statement meets an aborted transaction, and the COMMIT cannot succeed.
      sent.catch(() => undefined);
      return query.call(client, config, values, callback);
    }
    return sent.then(() => query.call(client, config, values));
  };
}

function named(error: Error, carried: readonly CarriedStatement[]): Error {
  error.message = `${error.message} (in an outbox statement sent with the transaction's next statement: ${carried[0].text.slice(0, 80).replace(/\s+/g, ' ')}…)`;
  return error;
}

function textOf(config: unknown): string | undefined {
  if (typeof config === 'string') return config;
  const candidate = config as { text?: unknown; submit?: unknown } | null;
  return typeof candidate?.submit !== 'function' && typeof candidate?.text === 'string' ? candidate.text : undefined;
}

const COMMITS = new Set(['COMMIT', 'COMMIT WORK', 'COMMIT TRANSACTION', 'END', 'END WORK', 'END TRANSACTION']);
const ROLLBACKS = new Set(['ROLLBACK', 'ROLLBACK WORK', 'ROLLBACK TRANSACTION', 'ABORT', 'ABORT WORK', 'ABORT TRANSACTION']);

function transactionEnd(text: string): 'commit' | 'rollback' | undefined {
  const words = text.trim().replace(/;\s*$/, '').replace(/\s+/g, ' ').toUpperCase();
  if (COMMITS.has(words)) return 'commit';
  if (ROLLBACKS.has(words)) return 'rollback';
  return undefined;
}

function isWire(wire: Partial<PgWire> | undefined): wire is PgWire {
  return (
    typeof wire?.parse === 'function' &&
    typeof wire.bind === 'function' &&
    typeof wire.execute === 'function' &&
    typeof wire.sync === 'function' &&
    typeof wire.parsedStatements === 'object'
  );
}

// node-postgres' own conversion of parameters (dates, buffers, arrays, JSON) keeps a carried statement's values as they would have been sent.
function pgValueMapper(): ((value: unknown) => unknown) | null {
  if (valueMapper === undefined) valueMapper = findOptionalPeer<{ prepareValue?: (value: unknown) => unknown }>('pg/lib/utils')?.prepareValue ?? null;
  return valueMapper;
}
