import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { OrderServiceConfig } from '../../apps/order-service/src/config/order-service.config';
import { postgresAdmin, postgresRows } from '../support/databases';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { PrivatePostgres } from '../support/private-postgres';
import { requireService } from '../support/services';
import { extraCopies, staysAtMostAfterGrace, waitFor } from '../support/wait-for';
import { closeAll } from '../support/teardown';

const RESTARTS = 20;
const CLIENTS = 4;
/**
 * The copies a restart may cause: the relay's batches in flight when the server went away (sent,
 * not settled; in the WAL mode, published and not yet confirmed) go out again once it is back, at
 * most maxBatchesInFlight (2) × batchSize (100) of the library's defaults, which the demo keeps.
 */
const DUPLICATES_PER_RESTART = 2 * 100;
const ORDER = { customerId: 'restart-test', items: [{ sku: 'SKU-1', quantity: 1, unitPriceCents: 100 }] };

/** The demo in a child process: an error nobody handles ends it, and the test sees the exit. */
class OrderServiceChild {
  readonly output: string[] = [];
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  port = 0;
  private constructor(readonly process: ChildProcess) {
    const keep = (chunk: Buffer) => this.output.push(...chunk.toString().split('\n').filter(Boolean));
    process.stdout?.on('data', keep);
    process.stderr?.on('data', keep);
    process.once('exit', (code, signal) => (this.exit = { code, signal }));
  }

  static async start(config: OrderServiceConfig): Promise<OrderServiceChild> {
    const child: OrderServiceChild = new OrderServiceChild(
      fork(join(__dirname, 'order-service.child.ts'), [], {
        execArgv: ['-r', join(__dirname, '..', 'support', 'ts-child.register.cjs')],
        env: { ...process.env, ORDER_SERVICE_CHILD: JSON.stringify(config) },
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      }),
    );
    let timer: NodeJS.Timeout | undefined;
    child.port = await new Promise<number>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`the demo did not start within 90 s: ${child.output.slice(-20).join('\n')}`)), 90_000);
      child.process.on('message', (message: { t: string; port?: number; text?: string }) => {
        if (message.t === 'ready') resolve(message.port!);
        if (message.t === 'failed') reject(new Error(`the demo failed to start: ${message.text}`));
      });
      child.process.once('exit', (code) => reject(new Error(`the demo exited (${code}) before it was ready: ${child.output.slice(-20).join('\n')}`)));
    })
      .catch(async (error: unknown) => {
        await child.stop();
        throw error;
      })
      .finally(() => clearTimeout(timer));
    return child;
  }

  /** What the process printed about the requests that failed (Nest's ExceptionsHandler), or else its last lines. */
  errors(): string {
    const failed = this.output.flatMap((line, at) => (/\[ExceptionsHandler\]/.test(line) ? this.output.slice(at, at + 8) : []));
    return (failed.length ? failed : this.output.slice(-60)).slice(0, 80).join('\n');
  }

  async stop(): Promise<void> {
    if (this.exit) return;
    const exited = new Promise<void>((resolve) => this.process.once('exit', () => resolve()));
    this.process.kill('SIGTERM');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
}

interface Answer {
  status: number | 'no answer';
  retryAfter: string | null;
  body: string;
  /** Whether the server was down for the whole request. */
  down: boolean;
}

/** Clients placing orders back to back until stopped (several, so that the pool opens several connections at once after a restart); every answer is kept. */
class OrderLoad {
  readonly answers: Answer[] = [];
  private running = true;
  private readonly workers: Promise<void>[];

  constructor(
    private readonly port: number,
    private readonly isDown: () => boolean,
  ) {
    this.workers = Array.from({ length: CLIENTS }, () => this.worker());
  }

  created(): number {
    return this.answers.filter((answer) => answer.status === 201).length;
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
  }

  private async worker(): Promise<void> {
    while (this.running) {
      const downBefore = this.isDown();
      let answer: Omit<Answer, 'down'>;
      try {
        const response = await fetch(`http://127.0.0.1:${this.port}/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(ORDER),
          signal: AbortSignal.timeout(20_000),
        });
        answer = { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.text()).slice(0, 300) };
      } catch (error) {
        answer = { status: 'no answer', retryAfter: null, body: String(error) };
      }
      this.answers.push({ ...answer, down: downBefore && this.isDown() });
      // A refused request comes back at once: do not spin on it.
      if (answer.status !== 201) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

describe.each(['table', 'wal'] as const)('the demo while PostgreSQL restarts %#: delivery %s', (delivery) => {
  let server: PrivatePostgres | undefined;
  let app: OrderServiceChild | undefined;
  let reader: KafkaTopicReader | undefined;
  let config: OrderServiceConfig;

  beforeAll(async () => {
    const brokers = requireService('kafka').split(',');
    server = await PrivatePostgres.start(`restarts-${delivery}`);
    const database = `orders_${delivery}`;
    await postgresAdmin(server.url(), `CREATE DATABASE ${database}`);
    const suffix = randomBytes(5).toString('hex');
    config = {
      httpPort: 0,
      database: { type: 'postgres', url: server.url(database) },
      broker: { transport: 'kafka', brokers, clientId: `restarts-${suffix}`, groupId: `restarts-${suffix}` },
      ordersTopic: `orders-restarts-${delivery}-${suffix}`,
      outbox: { relay: true, delivery, pollIntervalMs: 200, backoffInitialMs: 200, backoffMaxMs: 2_000 },
    };
    app = await OrderServiceChild.start(config);
    reader = new KafkaTopicReader(brokers, config.ordersTopic);
    await reader.start();
  }, 150_000);

  afterAll(() => closeAll(() => app?.stop(), () => reader?.stop(), () => server?.cleanup()), 60_000);

  it(`stays up through ${RESTARTS} restarts (fast and immediate), answers 503 while the server is down and publishes every order it saved`, async () => {
    const db = server!;
    let down = false;
    // From the server accepting connections again to the demo's next 201, per restart.
    const recoveries: number[] = [];
    let backAt: number | undefined;
    const load = new OrderLoad(app!.port, () => down);
    const alive = () => {
      if (app!.exit) throw new Error(`the demo exited (code ${app!.exit.code}, signal ${app!.exit.signal}):\n${app!.errors()}`);
    };
    try {
      for (let restart = 0; restart < RESTARTS; restart++) {
        const mode = restart % 2 === 0 ? 'fast' : 'immediate';
        const createdBefore = load.created();
        await waitFor(`an order saved before restart ${restart + 1}`, () => (alive(), load.created() > createdBefore), 60_000);
        if (backAt !== undefined) recoveries.push(Date.now() - backAt);
        await db.end(mode);
        down = true;
        const answeredDown = () => load.answers.filter((answer) => answer.down).length;
        const answeredBefore = answeredDown();
        await waitFor(`two requests answered while the server is down (restart ${restart + 1}, ${mode})`, () => (alive(), answeredDown() >= answeredBefore + 2), 30_000);
        down = false;
        await db.begin();
        backAt = Date.now();
      }
      const createdBefore = load.created();
      await waitFor('an order saved after the last restart', () => (alive(), load.created() > createdBefore), 60_000);
      recoveries.push(Date.now() - backAt!);
    } finally {
      await load.stop();
    }
    alive();

    const counts = (answers: Answer[]) => answers.reduce<Record<string, number>>((all, a) => ({ ...all, [a.status]: (all[a.status] ?? 0) + 1 }), {});
    const whileDown = load.answers.filter((answer) => answer.down);
    const failures = load.answers.filter((answer) => answer.status !== 201 && answer.status !== 503);
    const summary = `all answers ${JSON.stringify(counts(load.answers))}, while down ${JSON.stringify(counts(whileDown))}`;
    // Never a 500 (nor anything but 201 and 503), and while the server is down, only 503 with Retry-After.
    expect({ summary, failures: failures.slice(0, 5), log: failures.length ? app!.errors() : '' }).toEqual({ summary, failures: [], log: '' });
    expect(whileDown.length).toBeGreaterThanOrEqual(RESTARTS * 2);
    expect(whileDown.filter((answer) => answer.status !== 503 || answer.retryAfter === null)).toEqual([]);

    // Every order saved (a 201, or a request whose commit went through before its answer was lost) reached the topic at least once.
    const saved = (await postgresRows(db.url(`orders_${delivery}`), 'SELECT id FROM orders')).map((row) => String(row.id));
    expect(saved.length).toBeGreaterThanOrEqual(load.created());
    await waitFor(
      `all ${saved.length} saved orders on the topic`,
      () => {
        alive();
        const published = new Set(reader!.records.map((record) => record.key));
        return saved.every((id) => published.has(id));
      },
      90_000,
    );
    const messageIds = () => reader!.records.map((record) => record.headers['outbox-message-id']);
    const duplicates = await staysAtMostAfterGrace('duplicate deliveries', () => extraCopies(messageIds()), RESTARTS * DUPLICATES_PER_RESTART);
    const perEvent = new Map<string, number>();
    for (const id of messageIds()) perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
    // The errors the guards took are told to the operator, summarized: a few lines, not one per client.
    const connectionWarnings = app!.output.filter((line) => /connection failed|more .* connection error/.test(line)).length;
    expect(connectionWarnings).toBeGreaterThan(0);
    console.info(
      `[restarts ${delivery}] ${RESTARTS} restarts: ${summary}; ${saved.length} orders saved, ${perEvent.size} events published, ` +
        `${duplicates} duplicate deliveries (max ${Math.max(...perEvent.values())} of one event); ${connectionWarnings} connection-error log lines; ` +
        `first 201 after the server is back: median ${recoveries.sort((a, b) => a - b)[recoveries.length >> 1]} ms, max ${recoveries.at(-1)} ms`,
    );
  }, 600_000);
});
