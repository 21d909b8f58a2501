/** The texts of the CloudEvents option and of reading CloudEvents, each naming what is wrong and what to do. */

export const CLOUDEVENTS_PACKAGE = 'cloudevents';

export const missingCloudEventsSource = (where: string[]) =>
  `OutboxModule option "envelope.source" is required: ${where.join(', ')} ask for CloudEvents, whose "source" attribute ` +
  `names the service that publishes them. Set it to a URI-reference, e.g. envelope: { source: '/shop/orders', ... }.`;

export const missingCloudEventsSdk = (where: string[]) =>
  `OutboxModule option ${where.map((path) => `"${path}"`).join(', ')} asks for CloudEvents, made by the package "${CLOUDEVENTS_PACKAGE}", ` +
  `which is not installed. Run "npm install ${CLOUDEVENTS_PACKAGE}", or set the format back to 'outbox'.`;

export const transportCannotSendFormat = (option: string, format: string, transport: string, formats: readonly string[]) =>
  `OutboxModule option "${option}" asks for '${format}' on the transport "${transport}", which can only send ${formats.map((name) => `'${name}'`).join(', ')}` +
  (format === 'cloudevents-binary'
    ? ': binary mode puts the CloudEvent attributes in ce_* headers, which only the Kafka transports carry (the Nest client for other brokers wraps the body in its own packet). Use \'cloudevents-structured\' there.'
    : '. A custom OutboxTransport declares what it sends in "envelopeFormats" (and must then send OutgoingMessage.body when it is set).');

export const unsentFormat = (destination: string, format: string, transport: string) =>
  `Not published: the destination "${destination}" is set to '${format}', which the transport "${transport}" cannot send. ` +
  `Change OutboxModule option "envelope" (or the route), then requeue the row.`;

export const invalidCloudEvent = (detail: string) => `not a CloudEvent the outbox can read: ${detail}`;
