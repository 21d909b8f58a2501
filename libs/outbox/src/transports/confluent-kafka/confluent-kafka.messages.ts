import { shownValue } from '../../core/shown-value';

export const CONFLUENT_KAFKA_PACKAGE = '@confluentinc/kafka-javascript';

/** How to get the native addon built where no prebuilt binary can be downloaded. */
const BUILD_HINT =
  `Its install script must run (npm 11: "npm install-scripts approve ${CONFLUENT_KAFKA_PACKAGE}") to download a prebuilt ` +
  `librdkafka addon; where no download is possible, build the bundled librdkafka instead (python3, make, g++, OpenSSL and zlib headers; ` +
  `about 2 minutes): see "Kafka on librdkafka" in docs/transports.md, or in this repository run "bash scripts/services.sh kafka-javascript".`;

export const invalidConfluentKafkaOption = (option: string, expected: string, got: unknown) =>
  `Invalid ConfluentKafkaTransport option "${option}": expected ${expected}, got ${shownValue(got)}.`;

export const ownedLibrdkafkaProperty = (property: string, option: string | undefined) =>
  option
    ? `ConfluentKafkaTransport option "config" may not set "${property}": use the option "${option}" instead.`
    : `ConfluentKafkaTransport option "config" may not set "${property}": the transport sets it itself (acks from all in-sync replicas, ` +
      `delivery reports for every message, no transactions), or "published" would no longer mean what the relay relies on.`;

export const missingConfluentKafka = () =>
  `ConfluentKafkaTransport needs the package "${CONFLUENT_KAFKA_PACKAGE}", which is not installed. ` +
  `Run "npm install ${CONFLUENT_KAFKA_PACKAGE}", or publish to Kafka through a Nest ClientKafka (kafkajs) instead. ${BUILD_HINT}`;

export const confluentKafkaAddonMissing = (detail: string) =>
  `ConfluentKafkaTransport found "${CONFLUENT_KAFKA_PACKAGE}" but could not load its native addon (${detail}). ${BUILD_HINT}`;

export const notAcknowledged = (transport: string, detail: string) => `${transport}: the broker did not acknowledge the message: ${detail}`;

export const notProduced = (transport: string, detail: string) => `${transport}: librdkafka refused the message: ${detail}`;

export const notConnected = (transport: string, detail: string) => `${transport}: could not connect to the brokers: ${detail}`;

export const closedBeforeAcknowledged = (transport: string) =>
  `${transport}: the transport closed before the broker acknowledged the message (it may still have arrived)`;

export const earlierMessageRefused = (transport: string) => `${transport}: not sent, an earlier message of the batch was refused`;
