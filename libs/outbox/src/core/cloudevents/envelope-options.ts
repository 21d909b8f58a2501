import { OutboxConfigurationError } from '../outbox.errors';
import { DESTINATION_RULE, isDestinationName } from '../names';
import { invalidOption } from '../outbox.messages';
import { missingCloudEventsSource } from './cloudevents.messages';

/**
 * What a destination's messages look like on the wire:
 * - `outbox`: the library's own envelope as the body, its fields also as `outbox-*` headers;
 * - `cloudevents-binary`: a CloudEvent in binary mode: the event's payload as the body, the attributes
 *   as `ce_*` headers (the CloudEvents Kafka binding; Kafka transports only);
 * - `cloudevents-structured`: the whole CloudEvent as a JSON body, `content-type: application/cloudevents+json`.
 */
export type EnvelopeFormat = 'outbox' | 'cloudevents-binary' | 'cloudevents-structured';

export const ENVELOPE_FORMATS: readonly EnvelopeFormat[] = ['outbox', 'cloudevents-binary', 'cloudevents-structured'];

/**
 * Which of the envelope's fields the `outbox` format also sends as `outbox-*` headers (the body
 * carries them all, whatever this says): `'all'`; `'id-and-type'` (`outbox-message-id`,
 * `outbox-event-type`: enough to deduplicate and to route by type without reading the body); or
 * `'none'` (the message's own headers only). Fewer headers cost the relay less per message (each is
 * an object of its own for librdkafka); what a consumer loses is filtering or routing on the
 * missing fields without parsing the body.
 */
export type EnvelopeHeaders = 'all' | 'id-and-type' | 'none';

export const ENVELOPE_HEADER_CHOICES: readonly EnvelopeHeaders[] = ['all', 'id-and-type', 'none'];

/** How published messages are shaped, module-wide and per destination. */
export interface EnvelopeOptions {
  /** Format of every destination not named in `destinations`. Default `'outbox'`. */
  format?: EnvelopeFormat;
  /**
   * The CloudEvents `source` attribute (a URI-reference naming this service, e.g. `/shop/orders` or
   * `urn:shop:orders`). Required as soon as any destination uses a CloudEvents format. Default: none.
   */
  source?: string;
  /** Format per destination (topic, queue or subject, on whichever transport publishes it). Default: none. */
  destinations?: Record<string, EnvelopeFormat>;
  /** The envelope's fields sent as `outbox-*` headers too, in the `outbox` format (see EnvelopeHeaders). Default `'all'`. */
  headers?: EnvelopeHeaders;
}

export interface ResolvedEnvelopeOptions {
  format: EnvelopeFormat;
  headers: EnvelopeHeaders;
  source?: string;
  destinations: Readonly<Record<string, EnvelopeFormat>>;
}

export const ENVELOPE_DEFAULTS = { format: 'outbox', headers: 'all' } as const;

const MAX_SOURCE = 2_048;
// RFC 3986: unreserved, reserved and percent-encoded characters; anything else (spaces, quotes, non-ASCII) must be encoded.
const URI_REFERENCE = /^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})+$/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** Applies the default and refuses what cannot work, naming the option; `undefined` means "the default". */
export function resolveEnvelopeOptions(options: EnvelopeOptions | undefined): ResolvedEnvelopeOptions {
  if (options === undefined) return { format: ENVELOPE_DEFAULTS.format, headers: ENVELOPE_DEFAULTS.headers, destinations: {} };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) fail('envelope', 'an object { format?, source?, destinations?, headers? }', options);
  const format = options.format ?? ENVELOPE_DEFAULTS.format;
  checkFormat('envelope.format', format);
  const destinations = options.destinations ?? {};
  if (typeof destinations !== 'object' || destinations === null || Array.isArray(destinations)) {
    fail('envelope.destinations', "an object of formats by destination, e.g. { 'orders.events': 'cloudevents-binary' }", destinations);
  }
  for (const [destination, destinationFormat] of Object.entries(destinations)) {
    if (!isDestinationName(destination)) fail(`envelope.destinations["${destination}"]`, `a key that is a destination name (${DESTINATION_RULE})`, destination);
    checkFormat(`envelope.destinations["${destination}"]`, destinationFormat);
  }
  const headers = options.headers ?? ENVELOPE_DEFAULTS.headers;
  if (!ENVELOPE_HEADER_CHOICES.includes(headers)) fail('envelope.headers', ENVELOPE_HEADER_CHOICES.map((name) => `'${name}'`).join(', '), headers);
  const resolved: ResolvedEnvelopeOptions = { format, headers, destinations: { ...destinations } };
  if (options.source !== undefined) {
    checkSource(options.source);
    resolved.source = options.source;
  }
  const cloudEvents = cloudEventsDestinations(resolved);
  if (cloudEvents.length > 0 && resolved.source === undefined) throw new OutboxConfigurationError(missingCloudEventsSource(cloudEvents));
  return resolved;
}

/** The format of messages published to `destination`. */
export function formatOf(envelope: ResolvedEnvelopeOptions, destination: string): EnvelopeFormat {
  return envelope.destinations[destination] ?? envelope.format;
}

export function isCloudEventsFormat(format: EnvelopeFormat): boolean {
  return format !== 'outbox';
}

/** Where CloudEvents are asked for, as option paths (empty when nowhere): what needs the SDK and a `source`. */
export function cloudEventsDestinations(envelope: ResolvedEnvelopeOptions): string[] {
  const named = Object.entries(envelope.destinations)
    .filter(([, format]) => isCloudEventsFormat(format))
    .map(([destination]) => `envelope.destinations["${destination}"]`);
  return isCloudEventsFormat(envelope.format) ? ['envelope.format', ...named] : named;
}

function checkFormat(option: string, format: unknown): asserts format is EnvelopeFormat {
  if (!ENVELOPE_FORMATS.includes(format as EnvelopeFormat)) fail(option, ENVELOPE_FORMATS.map((name) => `'${name}'`).join(', '), format);
}

function checkSource(source: unknown): void {
  const expected = "a URI-reference of 1 to 2048 characters naming this service, e.g. '/shop/orders', 'urn:shop:orders' or 'https://shop.example/orders' (CloudEvents 'source'; percent-encode spaces and non-ASCII)";
  if (typeof source !== 'string' || source.length === 0 || source.length > MAX_SOURCE || !URI_REFERENCE.test(source)) fail('envelope.source', expected, source);
  // A colon before any slash must end a valid scheme ("a b:c" is refused above; "1x:y" is not a scheme).
  const colon = source.indexOf(':');
  const slash = source.search(/[/?#]/);
  if (colon !== -1 && (slash === -1 || colon < slash) && !SCHEME.test(source)) fail('envelope.source', expected, source);
}

function fail(option: string, expected: string, got: unknown): never {
  throw new OutboxConfigurationError(invalidOption(option, expected, got));
}
