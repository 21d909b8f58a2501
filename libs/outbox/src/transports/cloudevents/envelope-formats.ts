import { cloudEventsDestinations, isCloudEventsFormat, type EnvelopeFormat, type ResolvedEnvelopeOptions } from '../../core/cloudevents/envelope-options';
import { transportCannotSendFormat } from '../../core/cloudevents/cloudevents.messages';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { DEFAULT_TRANSPORT, type OutboxRoute } from '../../core/outbox-options';
import type { OutboxTransport } from '../../core/outbox-transport.port';
import { IN_PROCESS_TRANSPORT } from '../in-process.transport';
import { loadCloudEventsSdk } from './cloudevents.peer';
import { EnvelopeFormatTransport, OUTBOX_ONLY } from './envelope-format.transport';

/**
 * The transports as the relay uses them: unchanged when every destination keeps the outbox
 * envelope; otherwise each wrapped to shape its messages, once it is checked that every transport
 * that may publish a CloudEvents destination can send that format, and the SDK is loaded. Runs at
 * bootstrap, before anything is published. In-process handlers always receive the envelope.
 */
export function withEnvelopeFormats(transports: Map<string, OutboxTransport>, envelope: ResolvedEnvelopeOptions, routes: readonly OutboxRoute[]): Map<string, OutboxTransport> {
  const asked = cloudEventsDestinations(envelope);
  if (asked.length === 0) return transports;
  checkTransportsCanSend(transports, envelope, routes);
  const sdk = loadCloudEventsSdk(asked);
  return new Map([...transports].map(([name, transport]) => [name, name === IN_PROCESS_TRANSPORT ? transport : new EnvelopeFormatTransport(transport, envelope, sdk)]));
}

function checkTransportsCanSend(transports: Map<string, OutboxTransport>, envelope: ResolvedEnvelopeOptions, routes: readonly OutboxRoute[]): void {
  const check = (option: string, format: EnvelopeFormat, names: string[]) => {
    for (const name of names) {
      const transport = transports.get(name);
      if (!transport) continue;
      const formats = transport.envelopeFormats ?? OUTBOX_ONLY;
      if (!formats.includes(format)) throw new OutboxConfigurationError(transportCannotSendFormat(option, format, describe(name, transport), formats));
    }
  };
  const brokers = [...transports.keys()].filter((name) => name !== IN_PROCESS_TRANSPORT);
  if (isCloudEventsFormat(envelope.format)) check('envelope.format', envelope.format, brokers);
  for (const [destination, format] of Object.entries(envelope.destinations)) {
    if (!isCloudEventsFormat(format)) continue;
    // A route's topic is published by the route's transport; any other destination by the default transport.
    const routed = routes.filter((route) => route.topic === destination).map((route) => route.transport);
    check(`envelope.destinations["${destination}"]`, format, routed.length > 0 ? [...new Set(routed)] : [DEFAULT_TRANSPORT]);
  }
}

function describe(name: string, transport: OutboxTransport): string {
  return name === DEFAULT_TRANSPORT ? transport.name : `${name}" ("${transport.name}`;
}
