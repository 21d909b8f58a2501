// @nest-outbox/outbox/kafka: the Kafka transport on librdkafka (@confluentinc/kafka-javascript, an
// optional peer, loaded only when a transport is built). Kafka through Nest's ClientKafka (kafkajs)
// needs nothing from here: give its ClientsModule token as `transport`.
export { ConfluentKafkaTransport } from '../transports/confluent-kafka/confluent-kafka.transport';
export { CONFLUENT_KAFKA_DEFAULTS, type ConfluentKafkaTransportOptions, type LibrdkafkaValue } from '../transports/confluent-kafka/confluent-kafka.options';
// Reading back what the outbox published with `schemaRegistry` (@confluentinc/schemaregistry, an optional peer).
export { OutboxRecordDecoder, type ReceivedKafkaRecord } from '../schema-registry/outbox-record.decoder';
export type { SchemaRegistryOptions, SchemaRegistryClientLike } from '../core/schema-registry/schema-registry.options';
export type { OutboxEventSchema } from '../core/schema-registry/event-schema';
export type { SubjectStrategy } from '../core/schema-registry/subject-names';
