import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';

const tracer = trace.getTracer('order-service');

/**
 * A SERVER span per HTTP request that continues the caller's `traceparent`, so the events the
 * request writes carry its trace. An app with `@opentelemetry/instrumentation-http` has this
 * already; without an OpenTelemetry SDK registered, every call here is a no-op.
 */
export function traceContextMiddleware(request: Request, response: Response, next: NextFunction): void {
  const parent = propagation.extract(context.active(), request.headers);
  const span = tracer.startSpan(`${request.method} ${request.path}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'url.path': request.path } }, parent);
  response.on('finish', () => {
    span.setAttribute('http.response.status_code', response.statusCode);
    if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  context.with(trace.setSpan(parent, span), next);
}
