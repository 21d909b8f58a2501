import { declaredAggregates, declaredEvents } from './event-metadata';
import { destinationsOfEvent, type DeclaredAggregate, type DestinationSettings } from './asyncapi/event-destinations';
import { DEFAULT_TRANSPORT } from './outbox-options';

/**
 * The destinations an application declares, by transport name: `defaultTopic`, each route's
 * topic, each `@PublishesEvents` topic, and each `@OutboxEvent` type's destinations as the message
 * factory would place it (its own topic, `resolveTopic` asked for that type, its aggregates').
 * A destination that only `resolveTopic` picks from a payload or an id is not known before the
 * first row names it.
 */
export function declaredDestinations(settings: DestinationSettings): Map<string, string[]> {
  const aggregates: DeclaredAggregate[] = declaredAggregates().map(({ aggregateClass, options }) => ({ aggregateType: options.aggregateType ?? aggregateClass.name, topic: options.topic }));
  const found: Array<{ transport: string; destination: string | undefined }> = [
    { transport: DEFAULT_TRANSPORT, destination: settings.defaultTopic },
    ...aggregates.map((aggregate) => ({ transport: DEFAULT_TRANSPORT, destination: aggregate.topic })),
    ...(settings.routes ?? []).map((route) => ({ transport: route.transport, destination: route.topic })),
    ...declaredEvents().flatMap(({ metadata }) => destinationsOfEvent(metadata, aggregates, settings).destinations),
  ];
  const byTransport = new Map<string, string[]>();
  for (const { transport, destination } of found) {
    if (!destination) continue;
    const destinations = byTransport.get(transport) ?? [];
    if (!destinations.includes(destination)) destinations.push(destination);
    byTransport.set(transport, destinations);
  }
  return byTransport;
}
