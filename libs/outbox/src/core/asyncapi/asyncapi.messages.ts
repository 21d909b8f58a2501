/** Texts of the AsyncAPI description, each naming the option and what to do. */

export const invalidAsyncApiOption = (option: string, expected: string, got: unknown) =>
  `OutboxModule option "asyncApi.${option}" must be ${expected}, got ${JSON.stringify(got) ?? String(got)}.`;

export const noDeclaredEvents = () =>
  'No event class was declared with @OutboxEvent() when this document was made, so it lists no message. ' +
  'Events added with OutboxPublisher.add() under a type name alone are only known at run time.';

export const runtimeOnly = () =>
  'Made from the classes declared with @OutboxEvent() and @PublishesEvents() and from the module options. ' +
  'Not listed: events written with OutboxPublisher.add() under a type no class declares, and destinations ' +
  'that resolveTopic picks from the payload or the aggregate id (it is asked with neither).';

export const headersOnlyOnSomeBrokers = () =>
  'Set on brokers that carry headers (Kafka, RabbitMQ, NATS, MQTT). The same values are in the body (the envelope) on every broker.';

export const noFieldsDeclared = (className: string) =>
  `${className} declares no class-validator decorator, so its fields are not described. Decorate its properties (IsString, IsInt, ...) to have them here.`;

export const fieldsNeedSchemaPackage = (className: string, packageName: string) =>
  `${className} declares class-validator decorators; install "${packageName}" (an optional peer) to have its fields described here.`;

export const destinationAtRunTime = (type: string) =>
  `No destination of "${type}" is known before it is written: neither @OutboxEvent({ topic }), its aggregates' topic, ` +
  'defaultTopic nor resolveTopic names one. It is listed without a channel.';

export const destinationByAggregate = (destinations: string[]) =>
  `Sent to the destination of the aggregate that records it: one of ${destinations.map((d) => `"${d}"`).join(', ')}.`;

export const olderVersions = (version: number) =>
  `Version ${version}. Older versions are brought to this shape by the consumer's upcast hook; their own shape is not described.`;

export const cloudEventsBinary = () =>
  'A CloudEvent 1.0 in binary mode (envelope format "cloudevents-binary"): the payload is the body, the attributes are ce_* headers.';

export const cloudEventsStructured = () =>
  'A CloudEvent 1.0 in structured mode (envelope format "cloudevents-structured"): the whole event is the body, the payload under "data".';
