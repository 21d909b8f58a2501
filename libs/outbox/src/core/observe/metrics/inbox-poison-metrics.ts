import type * as PromClient from 'prom-client';
import { OutboxConfigurationError } from '../../outbox.errors';
import { metricAlreadyRegistered } from '../../outbox.messages';
import { POISON_STATES, type PoisonState } from '../../poison/poison.port';
import type { ResolvedMetricsOptions } from './metrics.options';

type Prom = typeof PromClient;

/**
 * `<prefix>inbox_poison_messages{consumer, state}`: the inbox's poison records, read at scrape time.
 * Labels are bounded: consumer names come from code, states are three. A consumer seen once keeps
 * its series (at 0) after its records are replayed or deleted, so an alert on it resolves.
 */
export class InboxPoisonMetrics {
  private readonly registry: PromClient.Registry;
  private readonly name: string;
  private readonly seen = new Set<string>();

  constructor(prom: Prom, options: Pick<ResolvedMetricsOptions, 'registry' | 'prefix'>, counts: () => Promise<Array<{ consumer: string; state: PoisonState; count: number }>>) {
    this.registry = (options.registry as unknown as PromClient.Registry | undefined) ?? prom.register;
    this.name = `${options.prefix}inbox_poison_messages`;
    if (this.registry.getSingleMetric(this.name)) throw new OutboxConfigurationError(metricAlreadyRegistered(this.name));
    const seen = this.seen;
    new prom.Gauge({
      name: this.name,
      help: 'Inbox poison records by consumer and state (failing: being retried; set-aside: acknowledged and kept for an operator).',
      labelNames: ['consumer', 'state'],
      registers: [this.registry],
      async collect(this: PromClient.Gauge<'consumer' | 'state'>) {
        const rows = await counts();
        this.reset();
        for (const row of rows) seen.add(row.consumer);
        for (const consumer of seen) {
          for (const state of POISON_STATES) {
            this.set({ consumer, state }, rows.find((row) => row.consumer === consumer && row.state === state)?.count ?? 0);
          }
        }
      },
    });
  }

  remove(): void {
    this.registry.removeSingleMetric(this.name);
  }
}
