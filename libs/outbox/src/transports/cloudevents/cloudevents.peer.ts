import { loadOptionalPeers } from '../../core/optional-peer';
import { CLOUDEVENTS_PACKAGE, missingCloudEventsSdk } from '../../core/cloudevents/cloudevents.messages';

// The few members of the `cloudevents` SDK the library uses, declared here so that its types do not
// name a package an application may not have.

/** The SDK's `CloudEvent`: validated on construction (strict mode), serialized by a binding. */
export interface SdkCloudEvent {
  readonly data?: unknown;
  toJSON(): Record<string, unknown>;
}

/** A message as a binding (`Kafka.binary`, `Kafka.structured`) produces it. */
export interface SdkBindingMessage {
  headers: Record<string, unknown>;
  value?: unknown;
  body?: unknown;
}

export interface CloudEventsSdk {
  CloudEvent: new (attributes: Record<string, unknown>, strict?: boolean) => SdkCloudEvent;
  Kafka: {
    binary(event: SdkCloudEvent): SdkBindingMessage;
    structured(event: SdkCloudEvent): SdkBindingMessage;
  };
}

let loaded: CloudEventsSdk | undefined;

/** Loads the SDK the first time a destination asks for CloudEvents; `where` names those options for the error. */
export function loadCloudEventsSdk(where: string[]): CloudEventsSdk {
  loaded ??= loadOptionalPeers<[CloudEventsSdk]>([CLOUDEVENTS_PACKAGE], () => missingCloudEventsSdk(where))[0];
  return loaded;
}
