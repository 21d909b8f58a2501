import type { NatsContext } from '@nestjs/microservices';
import type { TransportRun } from './transport-contract';

interface NatsHeaders {
  keys(): string[];
  get(name: string): string;
}

/**
 * The NATS connection settings of the nats and jetstream contract runs. Reconnect for ever, every
 * 250 ms (the defaults give up after 10 attempts 2 s apart); the probe client retries every 20 ms,
 * so that a probe arrives as soon as the consumer is subscribed again.
 */
export const natsConnection = (run: TransportRun, role: 'producer' | 'consumer' | 'probe') => ({
  servers: run.url('nats'),
  name: `outbox-${role}-${run.suffix}`,
  maxReconnectAttempts: -1,
  reconnectTimeWait: role === 'probe' ? 20 : 250,
  ...(role === 'probe' ? { reconnectJitter: 0 } : {}),
});

/** The headers of a received NATS message (but those named in `leaveOut`), and its subject. */
export function natsHeadersOf(context: unknown, leaveOut: string[] = []): { headers: Record<string, string>; subject: string; raw: NatsHeaders | undefined } {
  const raw = (context as NatsContext).getHeaders() as NatsHeaders | undefined;
  const headers = Object.fromEntries((raw?.keys() ?? []).filter((name) => !leaveOut.includes(name)).map((name) => [name, raw!.get(name)]));
  return { headers, subject: (context as NatsContext).getSubject(), raw };
}
