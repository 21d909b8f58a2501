import { Inject, Injectable } from '@nestjs/common';
import type { ResolvedObservability } from '../../core/observe/observability.options';
import type { OutboxStatsSnapshot } from '../../core/stats/outbox-stats';
import { OutboxStatsReader } from '../../core/stats/outbox-stats.reader';
import { createSqlOutboxStatsSource } from '../../sql/outbox-sql.factory';
import type { SqlConnection } from '../../core/sql-connection.port';
import { OUTBOX_CONNECTION, OUTBOX_EXTRAS, OUTBOX_OBSERVABILITY, OUTBOX_STREAM } from '../outbox.constants';
import type { DeliveryStream } from '../../core/stream/delivery-stream.port';
import type { ResolvedOutboxExtras } from '../outbox.module-definition';
import { OutboxObservers } from './outbox-observers.registry';
import { streamStatsOf } from './stream-stats';

/**
 * How the outbox is doing: pending, in-flight, retrying and dead rows, published in the last
 * minute and hour, the oldest pending row's age, overall and per destination, and when this
 * instance's relay last finished a round, and in the WAL mode the slot's lag. One query per
 * `stats.refreshIntervalMs`, whoever asks.
 */
@Injectable()
export class OutboxStats {
  private readonly reader: OutboxStatsReader;
  private last: OutboxStatsSnapshot | undefined;

  constructor(
    @Inject(OUTBOX_CONNECTION) connection: SqlConnection,
    @Inject(OUTBOX_EXTRAS) extras: ResolvedOutboxExtras,
    @Inject(OUTBOX_OBSERVABILITY) observability: ResolvedObservability,
    observers: OutboxObservers,
    @Inject(OUTBOX_STREAM) private readonly stream: DeliveryStream | null,
  ) {
    this.reader = new OutboxStatsReader({
      source: createSqlOutboxStatsSource(connection, extras),
      refreshIntervalMs: observability.stats.refreshIntervalMs,
      relayActivity: () => observers.activity.activity(),
    });
  }

  /** The latest snapshot; queries the table when the cached one is older than `stats.refreshIntervalMs` (or `fresh` is set). */
  async snapshot(options: { fresh?: boolean } = {}): Promise<OutboxStatsSnapshot> {
    const [snapshot, wal] = await Promise.all([this.reader.snapshot(options), streamStatsOf(this.stream)]);
    this.last = wal ? { ...snapshot, wal } : snapshot;
    return this.last;
  }

  /** The last snapshot read, without querying; `undefined` before the first. */
  peek(): OutboxStatsSnapshot | undefined {
    return this.last;
  }
}
