import type * as OtelApi from '@opentelemetry/api';
import type { ClaimedMessage, OutgoingMessage } from '../../outbox-message';
import type { RelayObserver } from '../relay-observer';

type Otel = typeof OtelApi;

const getter: OtelApi.TextMapGetter<Record<string, string>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/** Write time: the active trace context as headers (`traceparent`, `tracestate`), stored with the row. */
export function traceContextCapture(otel: Otel): () => Record<string, string> {
  return () => {
    const headers: Record<string, string> = {};
    otel.propagation.inject(otel.context.active(), headers);
    return headers;
  };
}

/**
 * Publish time: one PRODUCER span per message, child of the writer's span (read back from the
 * row's headers) and linked to it, whose context replaces `traceparent`/`tracestate` on the
 * outgoing headers and envelope, so that the consumer's span joins the same trace.
 */
export class OutboxTracing implements RelayObserver {
  private readonly tracer: OtelApi.Tracer;

  constructor(
    private readonly otel: Otel,
    tracerName: string,
  ) {
    this.tracer = otel.trace.getTracer(tracerName);
  }

  publishing(transport: string, messages: readonly ClaimedMessage[], outgoing: OutgoingMessage[], system?: string): (errors: Array<string | undefined>) => void {
    const { otel } = this;
    const spans = messages.map((message, index) => {
      const writer = otel.propagation.extract(otel.ROOT_CONTEXT, message.headers, getter);
      const writerSpan = otel.trace.getSpanContext(writer);
      const span = this.tracer.startSpan(
        `publish ${message.destination}`,
        {
          kind: otel.SpanKind.PRODUCER,
          links: writerSpan ? [{ context: writerSpan }] : [],
          attributes: {
            'messaging.system': system ?? transport,
            'messaging.operation.type': 'send',
            'messaging.operation.name': 'publish',
            'messaging.destination.name': message.destination,
            'messaging.message.id': message.id,
            ...(message.correlationId ? { 'messaging.message.conversation_id': message.correlationId } : {}),
            'outbox.transport': transport,
            'outbox.event_type': message.type,
            'outbox.aggregate_type': message.aggregateType,
            'outbox.attempt': message.attempt,
          },
        },
        writer,
      );
      const carried: Record<string, string> = {};
      otel.propagation.inject(otel.trace.setSpan(writer, span), carried);
      const current = outgoing[index];
      outgoing[index] = {
        ...current,
        headers: { ...current.headers, ...carried },
        envelope: { ...current.envelope, headers: { ...current.envelope.headers, ...carried } },
      };
      return span;
    });
    return (errors) =>
      spans.forEach((span, index) => {
        const error = errors[index];
        if (error !== undefined) span.setStatus({ code: otel.SpanStatusCode.ERROR, message: error });
        span.end();
      });
  }
}
