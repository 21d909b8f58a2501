import { DEFAULT_TRANSPORT, type EventDraft, type OutboxRoute, type ResolvedOutboxSettings } from '../outbox-options';
import type { OutboxEventMetadata, PublishesEventsOptions } from '../event-metadata';

export type DestinationSettings = Pick<ResolvedOutboxSettings, 'defaultTopic' | 'resolveTopic' | 'routes'> & Partial<Pick<ResolvedOutboxSettings, 'envelope'>>;

export interface DeclaredAggregate {
  /** `aggregateType` of `@PublishesEvents`, else the class name (the table name the library uses by default is TypeORM's to tell). */
  aggregateType: string;
  topic?: PublishesEventsOptions['topic'];
}

export interface EventDestination {
  transport: string;
  destination: string;
}

export interface EventDestinations {
  destinations: EventDestination[];
  /** Destinations that depend on which aggregate records the event, when there is more than one. */
  byAggregate?: string[];
}

/**
 * Where an event type goes, by the rule the message factory applies at write time: its own topic,
 * else `resolveTopic`, else its aggregate's topic, else `defaultTopic`; plus every matching route.
 * Nothing says which aggregate records which event, so an event without a topic of its own is
 * placed on the destination of each declared aggregate (or of none when no aggregate is declared).
 */
export function destinationsOfEvent(event: OutboxEventMetadata, aggregates: DeclaredAggregate[], settings: DestinationSettings): EventDestinations {
  const recorders: (DeclaredAggregate | undefined)[] = aggregates.length > 0 ? aggregates : [undefined];
  const primaries = unique(recorders.map((aggregate) => event.topic ?? askResolveTopic(settings, event, aggregate) ?? aggregate?.topic ?? settings.defaultTopic));
  const routed = (settings.routes ?? []).filter((route) => routeMatches(route, event.type, aggregates)).map((route) => ({ transport: route.transport, destination: route.topic }));
  const destinations = [...primaries.map((destination) => ({ transport: DEFAULT_TRANSPORT, destination })), ...routed];
  const seen = new Set<string>();
  return {
    destinations: destinations.filter(({ transport, destination }) => !seen.has(`${transport}\u0000${destination}`) && seen.add(`${transport}\u0000${destination}`)),
    byAggregate: primaries.length > 1 ? primaries : undefined,
  };
}

// The hook decides by type and aggregate type in most apps; it is asked without payload or id, and
// a hook that needs them (and throws or answers nothing) leaves the next rule to decide.
function askResolveTopic(settings: DestinationSettings, event: OutboxEventMetadata, aggregate: DeclaredAggregate | undefined): string | undefined {
  if (!settings.resolveTopic) return undefined;
  const draft: EventDraft = { type: event.type, version: event.version, aggregateType: aggregate?.aggregateType ?? '', aggregateId: '', payload: undefined };
  try {
    const topic = settings.resolveTopic(draft);
    return typeof topic === 'string' && topic !== '' ? topic : undefined;
  } catch {
    return undefined;
  }
}

function routeMatches(route: OutboxRoute, type: string, aggregates: DeclaredAggregate[]): boolean {
  if (route.events === undefined && route.aggregates === undefined) return true;
  return route.events?.includes(type) === true || aggregates.some((aggregate) => route.aggregates?.includes(aggregate.aggregateType));
}

function unique(values: (string | undefined)[]): string[] {
  return [...new Set(values.filter((value): value is string => value !== undefined))];
}
