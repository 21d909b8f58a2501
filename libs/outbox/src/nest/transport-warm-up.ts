import type { OutboxTransport } from '../core/outbox-transport.port';
import { transportNotReadyAtStart } from '../core/outbox.messages';

/**
 * How long the application's start waits for its transports to connect. A broker that does not
 * answer within it delays nothing more: the relay starts, the connection goes on in the
 * background, and a publish that fails is retried as every failed publish is.
 */
export const TRANSPORT_WARM_UP_WAIT_MS = 5_000;

interface WarmUpLogger {
  log(message: string): void;
}

/**
 * Connects each transport and readies the destinations the application declares on it (see
 * `OutboxTransport.connect`), all at once, so that the relay's first batch goes out as soon as
 * it is claimed. Waits at most `waitMs`; never fails the start: what is not ready is logged.
 */
export async function warmUpTransports(
  transports: Map<string, OutboxTransport>,
  destinations: Map<string, string[]>,
  logger: WarmUpLogger,
  waitMs = TRANSPORT_WARM_UP_WAIT_MS,
): Promise<void> {
  await Promise.all(
    [...transports].map(async ([name, transport]) => {
      if (!transport.connect) return;
      const label = name === 'default' ? `"${transport.name}"` : `${name} ("${transport.name}")`;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`it did not connect within ${waitMs} ms`), waitMs)));
      const connecting = transport.connect(destinations.get(name) ?? []).then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      const why = await Promise.race([connecting, late]);
      clearTimeout(timer);
      // Not a warning: a receiver that comes up after this app (a TCP consumer) is normal, and a
      // publish that fails is recorded, retried and logged as every failed publish is.
      if (why !== undefined) logger.log(transportNotReadyAtStart(label, why));
    }),
  );
}
