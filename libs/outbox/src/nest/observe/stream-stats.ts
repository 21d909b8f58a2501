import type { OutboxWalStats } from '../../core/stats/outbox-stats';
import type { DeliveryStream } from '../../core/stream/delivery-stream.port';

/** The stream's source for the stats snapshot; `undefined` in the table mode. A missing slot reads as nothing retained and not streamed. */
export async function streamStatsOf(stream: Pick<DeliveryStream, 'source' | 'lag'> | null): Promise<OutboxWalStats | undefined> {
  if (!stream) return undefined;
  const lag = await stream.lag();
  return { slot: stream.source.name, retainedBytes: lag?.retainedBytes ?? null, lagSeconds: lag?.lagSeconds ?? null, active: lag?.active ?? false };
}
