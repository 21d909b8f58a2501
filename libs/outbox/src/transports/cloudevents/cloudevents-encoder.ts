import type { EnvelopeFormat } from '../../core/cloudevents/envelope-options';
import { cloudEventAttributes } from '../../core/cloudevents/cloud-event-attributes';
import type { OutgoingMessage } from '../../core/outbox-message';
import type { CloudEventsSdk } from './cloudevents.peer';

/**
 * Turns an outgoing message into its CloudEvent through the SDK's Kafka binding: binary mode puts the
 * attributes in `ce_*` headers and the payload in the body; structured mode puts the whole event in
 * the body with `content-type: application/cloudevents+json`. The user's headers (trace context
 * among them) stay headers; the `outbox-*` headers are left out: the attributes say it all.
 */
export function encodeCloudEvent(sdk: CloudEventsSdk, message: OutgoingMessage, format: Exclude<EnvelopeFormat, 'outbox'>, source: string): OutgoingMessage {
  const event = new sdk.CloudEvent({ ...cloudEventAttributes(message.envelope, source) }, true);
  const encoded = format === 'cloudevents-binary' ? sdk.Kafka.binary(event) : sdk.Kafka.structured(event);
  const headers: Record<string, string> = { ...message.envelope.headers };
  // Broker headers are strings: the binding leaves extension values as they are (eventversion is a number).
  for (const [name, value] of Object.entries(encoded.headers)) if (value !== undefined && value !== null) headers[name] = String(value);
  const body: unknown = format === 'cloudevents-binary' ? event.data : JSON.parse(String(encoded.value));
  return { destination: message.destination, key: message.key, headers, envelope: message.envelope, body: body === undefined ? null : body };
}
