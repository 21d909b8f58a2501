import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CreateOutboxTable, OutboxConfigurationError, OutboxModule, OutboxPublisher, OutboxRelayHost, type OutboxModuleOptions } from '@nest-outbox/outbox';
import { RecordingTransport } from './support/recording.transport';
import { silentLogger } from './support/silent-logger';
import { waitFor } from './support/wait-for';

/** `relayStart`: when the relay starts claiming, in a real Nest application on SQLite. */
describe('relayStart', () => {
  let dir: string;
  let transport: RecordingTransport;
  let module: TestingModule | undefined;
  let app: INestApplication | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'outbox-relay-start-'));
    transport = new RecordingTransport();
  });

  afterEach(async () => {
    await app?.close();
    await module?.close();
    app = module = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  async function compile(options: Partial<OutboxModuleOptions>): Promise<TestingModule> {
    const compiled = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: join(dir, 'db.sqlite'), migrations: [CreateOutboxTable], migrationsRun: true, retryAttempts: 0 }),
        OutboxModule.forRoot({ transport, pollIntervalMs: 50, ...options }),
      ],
    })
      .setLogger(silentLogger)
      .compile();
    compiled.useLogger(false);
    return compiled;
  }

  async function record(context: INestApplication | TestingModule): Promise<string> {
    const [id] = await context.get(DataSource).transaction((manager) =>
      context.get(OutboxPublisher).add(manager, { type: 'thing.happened', aggregateType: 'thing', aggregateId: 't-1', topic: 'things', payload: {} }),
    );
    return id;
  }

  async function notYetPublished(context: INestApplication): Promise<void> {
    const host = context.get(OutboxRelayHost);
    // No relay exists yet: neither the after-commit wake-up nor a drain publishes anything.
    await host.drain();
    expect(await host.publishBatch()).toEqual({ claimed: 0, published: 0, retried: 0, dead: 0 });
    expect(await host.stats({ fresh: true })).toMatchObject({ pending: 1, relay: { running: false } });
    expect(transport.delivered).toHaveLength(0);
  }

  it("'listen' starts when the HTTP server listens, not at init", async () => {
    module = await compile({ relayStart: 'listen' });
    app = module.createNestApplication({ logger: false });
    await app.init();
    const id = await record(app);
    await notYetPublished(app);
    await app.listen(0, '127.0.0.1');
    await waitFor('the row published after listen', () => transport.delivered.some((message) => message.envelope.id === id));
    expect((await app.get(OutboxRelayHost).stats({ fresh: true })).relay.running).toBe(true);
  });

  it("'manual' starts at OutboxRelayHost.start(), and a second start() changes nothing", async () => {
    module = await compile({ relayStart: 'manual' });
    app = module.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    const id = await record(app);
    await notYetPublished(app);
    app.get(OutboxRelayHost).start();
    app.get(OutboxRelayHost).start();
    await waitFor('the row published after start()', () => transport.delivered.some((message) => message.envelope.id === id));
    expect(transport.delivered).toHaveLength(1);
  });

  it("'bootstrap' (the default) starts at init", async () => {
    module = await compile({});
    await module.init();
    const id = await record(module);
    await waitFor('the row published after init', () => transport.delivered.some((message) => message.envelope.id === id));
  });

  it("the transports are readied with the app's declared destinations before the first claim: at init, or with 'manual' at start()", async () => {
    const connected: Array<readonly string[] | undefined> = [];
    Object.assign(transport, { connect: async (destinations?: readonly string[]) => void connected.push(destinations) });
    module = await compile({ relayStart: 'manual', defaultTopic: 'things.default' });
    app = module.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    // Not at bootstrap: a transport to a listener of this very app would be refused then.
    expect(connected).toEqual([]);

    app.get(OutboxRelayHost).start();
    await waitFor('the transport readied at start()', () => connected.length > 0);
    expect(connected).toEqual([expect.arrayContaining(['things.default'])]);

    await app.close();
    app = undefined;
    await module.close();
    module = await compile({ defaultTopic: 'things.default' });
    connected.length = 0;
    await module.init();
    expect(connected).toEqual([expect.arrayContaining(['things.default'])]);
  });

  it.each([
    [{ relayStart: 'listen' as const }, /"relayStart": 'listen' starts the relay when the HTTP server listens, but this application has none/],
    [{ relayStart: 'later' as never }, /Invalid OutboxModule option "relayStart": expected one of 'bootstrap', 'listen', 'manual', got/],
  ])('%j fails at startup naming the option', async (options, message) => {
    const compiled = await compile(options);
    const failure = compiled.init();
    await expect(failure).rejects.toThrow(OutboxConfigurationError);
    await expect(failure).rejects.toThrow(message);
    await compiled.close().catch(() => undefined);
  });
});
