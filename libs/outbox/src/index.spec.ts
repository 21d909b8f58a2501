import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import * as root from '@nest-outbox/outbox';

/**
 * The root entry point holds what an application imports, and no more: at most 40 names, types
 * included. A name added to index.ts must be added here, which is the moment to ask whether an
 * application needs it or it belongs behind a subpath (testing, console, observability, core, typeorm, tenants).
 */
const MAX_ROOT_NAMES = 40;

const VALUES = [
  // module, publisher, operations from code
  'OutboxModule',
  'OutboxPublisher',
  'OutboxRelayHost',
  // several outboxes in one app: their providers by name
  'InjectOutbox',
  'OutboxAdmin',
  'JetStreamTransport',
  // aggregates and events
  'PublishesEvents',
  'OutboxEvent',
  'OutboxAggregateRoot',
  'WithOutboxEvents',
  'recordEvent',
  'isOutboxEnvelope',
  'toOutboxEvent',
  'OutboxEventPipe',
  'OnOutboxEvent',
  // the inbox
  'OutboxInboxModule',
  'OutboxInbox',
  'Idempotent',
  'OutboxDataLayerInbox',
  // errors
  'OutboxConfigurationError',
  'OutboxWriteError',
  'OutboxAdminError',
  'OutboxNonRetryableError',
  'OutboxEventValidationError',
  // migrations of the default tables
  'CreateOutboxTable',
  'CreateInboxTable',
  'CreateInboxPoisonTable',
  // process shutdown with a deadline
  'enableBoundedShutdown',
];

const TYPES = [
  'OutboxModuleOptions',
  'OutboxModuleExtras',
  'OutboxConnectionOptions',
  'OutboxMessageInput',
  'OutboxDataLayerTransaction',
  'OutboxTransport',
  'JetStreamTransportOptions',
  'PublishesEventsOptions',
  'OutboxEventOptions',
  'OutboxEnvelope',
  'RecordEventOptions',
  'OutboxInboxModuleOptions',
];

/** Every name index.ts exports, types included, read from its syntax (it only re-exports by name). */
function declaredExports(): { values: string[]; types: string[] } {
  const file = ts.createSourceFile('index.ts', readFileSync(join(__dirname, 'index.ts'), 'utf8'), ts.ScriptTarget.Latest);
  const values: string[] = [];
  const types: string[] = [];
  for (const statement of file.statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    const clause = statement.exportClause;
    // `export * from` would let a module's new export reach the root unseen.
    if (!clause || !ts.isNamedExports(clause)) throw new Error(`index.ts re-exports a whole module: ${statement.getText(file)}`);
    for (const element of clause.elements) (statement.isTypeOnly || element.isTypeOnly ? types : values).push(element.name.text);
  }
  return { values, types };
}

describe('the root entry point', () => {
  it(`exports at most ${MAX_ROOT_NAMES} names, types included`, () => {
    const { values, types } = declaredExports();
    expect(values.length + types.length).toBeLessThanOrEqual(MAX_ROOT_NAMES);
    expect(VALUES.length + TYPES.length).toBeLessThanOrEqual(MAX_ROOT_NAMES);
  });

  it('exports exactly the listed names', () => {
    const { values, types } = declaredExports();
    expect([...values].sort()).toEqual([...VALUES].sort());
    expect([...types].sort()).toEqual([...TYPES].sort());
  });

  it('holds at run time exactly the listed values, each defined', () => {
    expect(Object.keys(root).sort()).toEqual([...VALUES].sort());
    expect(VALUES.filter((name) => (root as Record<string, unknown>)[name] === undefined)).toEqual([]);
  });
});
