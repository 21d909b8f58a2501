import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import type { AsyncApiDocument } from '@nest-outbox/outbox/asyncapi';
import { validateAsyncApi } from './asyncapi-support';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
// A private build: the library as packed (its own node_modules/@nest-outbox/outbox, found first by
// the compiled apps beside it) and the apps compiled as an app is; the shared libs/outbox/dist is
// left to the tests that use it. Inside the repository, so that the other packages resolve.
const build = join(__dirname, `.build-${process.pid}`);
const library = join(build, 'node_modules', '@nest-outbox', 'outbox');
const bin = join(library, require(join(root, 'libs', 'outbox', 'package.json')).bin['nest-outbox']);
const compiled = (file: string) => join(build, 'app', file);
const billingApp = compiled('test/asyncapi/fixtures/billing-app.js');
const regionsApp = compiled('test/asyncapi/fixtures/regions-app.js');
const orderService = compiled('apps/order-service/src/asyncapi.js');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Result> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { cwd: build, env: { ...process.env, ...env }, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

beforeAll(async () => {
  mkdirSync(library, { recursive: true });
  cpSync(join(root, 'libs', 'outbox', 'package.json'), join(library, 'package.json'));
  // The working directory's package.json gives info.title and info.version when the module's options do not.
  writeFileSync(join(build, 'package.json'), JSON.stringify({ name: 'cli-test-app', version: '3.4.5', private: true }));
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  await Promise.all([
    run(process.execPath, [tsc, '-p', join(root, 'libs', 'outbox', 'tsconfig.lib.json'), '--outDir', join(library, 'dist')], { cwd: root }),
    run(process.execPath, [tsc, '-p', join(__dirname, 'fixtures', 'tsconfig.build.json'), '--outDir', join(build, 'app')], { cwd: root }),
  ]);
  expect(existsSync(bin) && existsSync(billingApp) && existsSync(regionsApp) && existsSync(orderService)).toBe(true);
}, 180_000);
afterAll(() => rmSync(build, { recursive: true, force: true }));

describe('nest-outbox asyncapi', () => {
  it('writes the typed app\'s document to stdout without relaying anything: a pending event stays pending, nothing is published', async () => {
    const database = join(build, 'billing.sqlite');
    const marker = join(build, 'marker');
    const { code, stdout, stderr } = await cli(['asyncapi', '--app', billingApp], { BILLING_DATABASE: database, BILLING_TRANSPORT_MARKER: marker, BILLING_SEED: '1' });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const doc: AsyncApiDocument = JSON.parse(stdout);
    expect((await validateAsyncApi(doc)).errors).toEqual([]);
    expect(Object.keys(doc.channels).sort()).toEqual(['billing', 'billing-audit', 'ledger-ledger_entries', 'payments']);
    expect((doc.components.messages['billing.invoice-issued.v2'].payload as any).properties.payload.properties.amountCents).toMatchObject({ type: 'integer', minimum: 0 });
    // The seeded event was written at bootstrap, and no relay took it: the endpoint's test shows the same app publishing it when it runs.
    const rows = new Database(database, { readonly: true }).prepare('SELECT event_type, status, attempts FROM outbox_messages').all();
    expect(rows).toEqual([{ event_type: 'billing.invoice-voided', status: 'pending', attempts: 0 }]);
    expect(existsSync(marker)).toBe(false);
  });

  it('describes the demo app (apps/order-service) from its compiled module, as YAML into --out, with no broker', async () => {
    const out = join(build, 'order-service.asyncapi.yaml');
    const { code, stdout, stderr } = await cli(['asyncapi', '--app', orderService, '--out', out, '--yaml'], {
      DATABASE_URL: `sqlite:${join(build, 'orders.sqlite')}`,
      ORDERS_TOPIC: 'orders-from-cli',
      // Nothing listens there: the command never connects to the broker.
      BROKER: 'kafka',
      KAFKA_BROKERS: '127.0.0.1:1',
    });
    expect({ code, stdout }).toEqual({ code: 0, stdout: '' });
    expect(stderr).toBe(`Wrote the AsyncAPI document to ${out}.\n`);
    const yaml = readFileSync(out, 'utf8');
    expect((await validateAsyncApi(yaml)).errors).toEqual([]);
    const doc = require('js-yaml').load(yaml) as AsyncApiDocument;
    expect(doc.info).toMatchObject({ title: 'order-service', version: '3.4.5' });
    expect(doc.channels).toEqual({
      'orders-from-cli': expect.objectContaining({
        address: 'orders-from-cli',
        messages: {
          'orders.order-cancelled.v1': { $ref: '#/components/messages/orders.order-cancelled.v1' },
          'orders.order-paid.v1': { $ref: '#/components/messages/orders.order-paid.v1' },
          'orders.order-placed.v1': { $ref: '#/components/messages/orders.order-placed.v1' },
        },
      }),
    });
    expect(Object.keys(doc.operations)).toEqual(['send-orders-from-cli']);
  });

  it('says what to pass when --app is missing, names no file, or exports no module, and when the app has no OutboxModule', async () => {
    const help = await cli(['--help']);
    expect(help.stdout).toMatch(/\n  asyncapi --app <file> \[--outbox <name>\] \[--out <file>\] \[--yaml\]\n/);
    const what = /Pass --app <file>: a compiled JavaScript file .* whose default export, or export named AppModule, is your root Nest module/;
    const missing = await cli(['asyncapi']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^nest-outbox: asyncapi needs the app\. Pass --app <file>/);
    const noFile = await cli(['asyncapi', '--app', 'dist/nowhere.js']);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toMatch(/asyncapi --app "dist\/nowhere\.js": no such file\./);
    expect(noFile.stderr).toMatch(what);
    const notApp = join(build, 'not-an-app.js');
    writeFileSync(notApp, 'exports.answer = 42;\n');
    const noModule = await cli(['asyncapi', '--app', notApp]);
    expect(noModule.code).toBe(2);
    expect(noModule.stderr).toMatch(/exports "answer", and no module\./);
    const noOutbox = await cli(['asyncapi', '--app', compiled('test/asyncapi/fixtures/not-an-outbox-app.js')]);
    expect(noOutbox.code).toBe(2);
    expect(noOutbox.stderr).toMatch(/the app does not import OutboxModule \(from @nest-outbox\/outbox\), so there is nothing to describe/);
    expect(noOutbox.stdout).toBe('');
  });

  it('describes the outbox --outbox names in an app with several, and refuses to pick one itself', async () => {
    const eu = await cli(['asyncapi', '--app', regionsApp, '--outbox', 'eu']);
    expect({ code: eu.code, stderr: eu.stderr }).toEqual({ code: 0, stderr: '' });
    const euDoc: AsyncApiDocument = JSON.parse(eu.stdout);
    expect(euDoc.info.title).toBe('Orders EU');
    const us: AsyncApiDocument = JSON.parse((await cli(['asyncapi', '--app', regionsApp, '--outbox', 'us'])).stdout);
    expect(us.info.title).toBe('Orders US');

    const unnamed = await cli(['asyncapi', '--app', regionsApp]);
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toMatch(/the app declares 2 outboxes \(eu, us\), each with a document of its own\. Pass --outbox <name>/);
    expect(unnamed.stdout).toBe('');
    const unknown = await cli(['asyncapi', '--app', regionsApp, '--outbox', 'apac']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--outbox "apac": the app declares no outbox of that name\. Its outboxes: eu, us/);
    // An app with one outbox: --outbox may name it ("default" without a name), or be left out.
    const billing = await cli(['asyncapi', '--app', billingApp, '--outbox', 'default']);
    expect(JSON.parse(billing.stdout).info.title).toBe('Billing');
  });
});
