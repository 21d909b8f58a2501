import type { OutgoingMessage } from '../core/outbox-message';
import type { OutboxTransport } from '../core/outbox-transport.port';
import { warmUpTransports } from './transport-warm-up';

class WarmingTransport implements OutboxTransport {
  readonly connected: Array<readonly string[] | undefined> = [];

  constructor(
    readonly name: string,
    private readonly outcome: 'ready' | 'refused' | 'silent',
  ) {}

  connect(destinations?: readonly string[]): Promise<void> {
    this.connected.push(destinations);
    if (this.outcome === 'refused') return Promise.reject(new Error('ECONNREFUSED 127.0.0.1:9092'));
    return this.outcome === 'ready' ? Promise.resolve() : new Promise(() => undefined);
  }

  async publish(_message: OutgoingMessage): Promise<void> {}
}

const logged = () => {
  const lines: string[] = [];
  return { lines, log: (message: string) => lines.push(message) };
};

describe('warmUpTransports', () => {
  it('connects every transport with the destinations declared on it, and an undeclared one with none', async () => {
    const kafka = new WarmingTransport('kafka', 'ready');
    const audit = new WarmingTransport('kafka', 'ready');
    const logger = logged();
    const transports = new Map<string, OutboxTransport>([['default', kafka], ['audit', audit]]);

    await warmUpTransports(transports, new Map([['default', ['orders', 'parcels']]]), logger);

    expect(kafka.connected).toEqual([['orders', 'parcels']]);
    expect(audit.connected).toEqual([[]]);
    expect(logger.lines).toEqual([]);
  });

  it('does not fail the start when a transport refuses: it logs it, naming the transport and why', async () => {
    const logger = logged();
    await expect(warmUpTransports(new Map([['audit', new WarmingTransport('kafka', 'refused')]]), new Map(), logger)).resolves.toBeUndefined();
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toContain('audit ("kafka") was not ready when the relay started (ECONNREFUSED 127.0.0.1:9092)');
    expect(logger.lines[0]).toContain('The relay starts anyway');
  });

  it('waits for a broker that does not answer no longer than it is told, and says so', async () => {
    const logger = logged();
    const started = performance.now();
    await warmUpTransports(new Map([['default', new WarmingTransport('kafka', 'silent')], ['fast', new WarmingTransport('nats', 'ready')]]), new Map(), logger, 50);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(logger.lines).toEqual([expect.stringContaining('"kafka" was not ready when the relay started (it did not connect within 50 ms)')]);
  });

  it('skips a transport without connect()', async () => {
    const logger = logged();
    const bare: OutboxTransport = { name: 'in-process', publish: async () => undefined };
    await expect(warmUpTransports(new Map([['default', bare]]), new Map([['default', ['orders']]]), logger)).resolves.toBeUndefined();
    expect(logger.lines).toEqual([]);
  });
});
