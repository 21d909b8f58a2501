import type * as OtelApi from '@opentelemetry/api';
import type { OutboxEnvelope } from '../../outbox-message';
import { loadOptional } from '../../optional-peer';

export interface ContinueTraceOptions {
  /** Span name. Default `process <event type>`. */
  name?: string;
  /** Tracer name. Default `'@nest-outbox/outbox'`. */
  tracerName?: string;
}

/**
 * Runs an `@EventPattern` handler inside a CONSUMER span that continues the trace the outbox
 * carried (`traceparent` in the envelope's headers, which every transport delivers, with or
 * without broker headers). The span ends when the handler's promise settles.
 *
 * ```ts
 * @EventPattern('orders')
 * handle(@Payload() envelope: OutboxEnvelope) {
 *   return continueOutboxTrace(envelope, () => this.orders.apply(envelope));
 * }
 * ```
 */
export function continueOutboxTrace<T>(envelope: Pick<OutboxEnvelope, 'type' | 'id' | 'headers'>, handler: () => T, options: ContinueTraceOptions = {}): T {
  const otel = loadOptional<typeof OtelApi>('@opentelemetry/api', 'continueOutboxTrace');
  const parent = otel.propagation.extract(otel.ROOT_CONTEXT, envelope.headers ?? {});
  const span = otel.trace.getTracer(options.tracerName ?? '@nest-outbox/outbox').startSpan(
    options.name ?? `process ${envelope.type}`,
    {
      kind: otel.SpanKind.CONSUMER,
      attributes: { 'messaging.operation.type': 'process', 'messaging.message.id': envelope.id, 'outbox.event_type': envelope.type },
    },
    parent,
  );
  const fail = (error: unknown) => {
    span.setStatus({ code: otel.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    span.end();
    throw error;
  };
  let result: T;
  try {
    result = otel.context.with(otel.trace.setSpan(parent, span), handler);
  } catch (error) {
    return fail(error);
  }
  if (result instanceof Promise) {
    return result.then((value: unknown) => (span.end(), value), fail) as T;
  }
  span.end();
  return result;
}
