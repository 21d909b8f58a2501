import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ClientTCP, type ClientProxy } from '@nestjs/microservices';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { CreateOutboxTable, OutboxModule, OutboxPublisher } from '@nest-outbox/outbox';
import { freePort } from './support/free-port';
import { sampleValue } from './support/prometheus-text';
import { silentLogger } from './support/silent-logger';
import { waitFor } from './support/wait-for';

const RULES = resolve(__dirname, '../deploy/prometheus/outbox.rules.yml');

/**
 * The shipped OutboxPublishFailing rule, fed with what real processes expose: a relay whose broker
 * (a TCP peer) is down from its start, restarted while it is still down, then the broker back.
 * Each scrape becomes one minute of a `promtool test rules` series.
 */
describe('OutboxPublishFailing on the metrics of real processes (SQLite + TCP)', () => {
  let dir: string;
  let port: number;
  let module: TestingModule | undefined;
  let broker: Server | undefined;
  const clients: ClientTCP[] = [];
  const sockets: Socket[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outbox-publish-failing-'));
    port = await freePort();
  });

  afterAll(async () => {
    await module?.close();
    // The app owns a ClientProxy it hands to the outbox: it closes it.
    for (const client of clients) await client.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((done) => (broker ? broker.close(done) : done(undefined)));
    rmSync(dir, { recursive: true, force: true });
  });

  async function startProcess(registry: Registry): Promise<TestingModule> {
    const compiled = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: join(dir, 'db.sqlite'), migrations: [CreateOutboxTable], migrationsRun: true, retryAttempts: 0 }),
        OutboxModule.forRoot({
          transport: clients[clients.push(new ClientTCP({ host: '127.0.0.1', port })) - 1] as ClientProxy,
          pollIntervalMs: 50, maxAttempts: 1_000, backoff: { initialMs: 20, maxMs: 50, jitter: 0 },
          metrics: { registry }, stats: { refreshIntervalMs: 20 },
        }),
      ],
    }).setLogger(silentLogger).compile();
    compiled.useLogger(false);
    await compiled.init();
    return compiled;
  }

  it('fires after 5 minutes of failures following a restart during the outage, and resolves when the broker is back', async () => {
    const labels = { transport: 'default', destination: 'things' };
    const failures: string[] = [];
    const pending: string[] = [];
    let registry = new Registry();
    /** One scrape, once the consecutive failures passed `above`. */
    const scrape = async (above: number) => {
      const text = await waitFor(`a scrape with more than ${above} failures in a row`, async () => {
        const metrics = await registry.metrics();
        return (sampleValue(metrics, 'outbox_publish_consecutive_failures', labels) ?? -1) > above && metrics;
      });
      failures.push(String(sampleValue(text, 'outbox_publish_consecutive_failures', labels)));
      pending.push(String(sampleValue(text, 'outbox_pending_messages', labels)));
      return Number(failures.at(-1));
    };

    module = await startProcess(registry);
    await module.get(DataSource).transaction((manager) =>
      module!.get(OutboxPublisher).add(manager, { type: 'thing.happened', aggregateType: 'thing', aggregateId: 't-1', topic: 'things', payload: {} }),
    );
    let last = 0;
    for (let minute = 0; minute < 3; minute++) last = await scrape(last);
    await module.close();
    failures.push('stale');
    pending.push('stale');

    // The restart: a fresh process, a fresh registry, the broker still down.
    registry = new Registry();
    module = await startProcess(registry);
    last = 0;
    for (let minute = 4; minute < 10; minute++) last = await scrape(last);

    broker = createServer((socket) => void sockets.push(socket.on('error', () => undefined).resume()));
    await new Promise<void>((listening) => broker!.listen(port, '127.0.0.1', listening));
    const recovered = await waitFor('the broker taking messages again', async () => {
      const metrics = await registry.metrics();
      return sampleValue(metrics, 'outbox_publish_consecutive_failures', labels) === 0 && sampleValue(metrics, 'outbox_pending_messages', labels) === 0 && metrics;
    });
    failures.push(String(sampleValue(recovered, 'outbox_publish_consecutive_failures', labels)));
    pending.push(String(sampleValue(recovered, 'outbox_pending_messages', labels)));

    const series = (name: string, values: string[]) => `      - series: '${name}{outbox="default", instance="app-1", transport="default", destination="things"}'\n        values: '${values.join(' ')}'`;
    const alert = (minute: number, firing: string | undefined) =>
      `      - eval_time: ${minute}m\n        alertname: OutboxPublishFailing\n        exp_alerts:` +
      (firing === undefined ? ' []' : `\n          - exp_labels: { severity: critical, outbox: default, destination: things }\n            exp_annotations: { summary: 'Outbox default: publishing to things fails (${firing} attempts in a row)' }`);
    const file = join(dir, 'real-process.test.yml');
    writeFileSync(file, [
      `rule_files: ['${RULES}']`, 'evaluation_interval: 1m', 'tests:', '  - interval: 1m', '    input_series:',
      series('outbox_publish_consecutive_failures', failures), series('outbox_pending_messages', pending),
      '    alert_rule_test:', alert(8, undefined), alert(9, failures[9]), alert(10, undefined), '',
    ].join('\n'));
    const { stdout } = await promisify(execFile)('promtool', ['test', 'rules', file]).catch((error: { stdout?: string; stderr?: string; code?: string }) => {
      throw new Error(error.code === 'ENOENT' ? 'promtool is missing: bash scripts/services.sh promtool' : `${error.stdout}${error.stderr}`);
    });
    expect(stdout).toContain('SUCCESS');
    expect(pending.slice(0, 3).every((value) => Number(value) === 1)).toBe(true);
  });
});
