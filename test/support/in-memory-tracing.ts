import { context, propagation, trace, type Span } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/** The real OpenTelemetry SDK (AsyncLocalStorage context, W3C propagation), exporting to memory. */
export class InMemoryTracing {
  readonly exporter = new InMemorySpanExporter();
  private readonly provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(this.exporter)] });

  constructor() {
    this.provider.register();
  }

  spans(): ReadableSpan[] {
    return this.exporter.getFinishedSpans();
  }

  /** A finished root span, standing for the caller of an HTTP request, and the `traceparent` header it sends. */
  clientSpan(name: string): { span: Span; headers: Record<string, string> } {
    const span = trace.getTracer('test-client').startSpan(name);
    const headers: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), span), headers);
    span.end();
    return { span, headers };
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  }
}
