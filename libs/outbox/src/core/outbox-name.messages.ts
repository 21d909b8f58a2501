// Messages of apps that declare several outboxes (`OutboxModule.forRoot({ name })`).

const called = (name: string | undefined) => (name === undefined ? 'the outbox declared without a name' : `the outbox "${name}"`);

export const outboxNameTaken = (name: string | undefined) =>
  `OutboxModule is declared twice as ${called(name)}. Give each outbox its own name: OutboxModule.forRoot({ name: 'orders_eu', … }); inject its publisher with @InjectOutbox(OutboxPublisher, 'orders_eu').`;

export const dataSourceCapturedTwice = (dataSource: string, first: string | undefined, second: string | undefined) =>
  `${called(first)} and ${called(second)} both use the TypeORM data source "${dataSource}": the events of an aggregate saved through it would be written to both. ` +
  `Give each outbox its own data source (dataSource: 'eu'), or declare the second with connection: { url } and add its events with OutboxPublisher.add(tx, …).`;
export const outboxMetricsTwice = (outbox: string, prefix: string) =>
  `The outbox "${outbox}" registers its metrics (prefix "${prefix}") twice in one prom-client registry: ` +
  `two OutboxModules with the same name, or two apps in one process on the global registry. ` +
  `Give each outbox its own name, or give one its own "metrics.registry" or "metrics.prefix".`;

export const metricsOptionsDiffer = (outbox: string, prefix: string) =>
  `The outbox "${outbox}" asks for other "metrics.latencyBuckets" than an outbox registered before it with the prefix "${prefix}" ` +
  `in the same registry: they share the metrics and so the histogram's buckets. Give both the same buckets, or this one its own "metrics.prefix".`;

export const shardsNeedTwo = (shards: unknown) =>
  `ShardedOutboxPublisher.provide(token, shards) needs two or more distinct outbox names, in a fixed order (the order places the aggregates); got ${JSON.stringify(shards)}.`;
