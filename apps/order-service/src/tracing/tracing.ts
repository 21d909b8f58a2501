import { ConsoleSpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ConfigError } from '../config/order-service.config';

export type TracesExporter = 'none' | 'console';

/** The demo's tracing settings, from the standard OpenTelemetry variables it honours. */
export function tracingConfig(env: NodeJS.ProcessEnv = process.env): { enabled: boolean; exporter: TracesExporter } {
  const disabled = env.OTEL_SDK_DISABLED ?? '';
  if (!['', 'true', 'false'].includes(disabled)) throw new ConfigError(`OTEL_SDK_DISABLED "${disabled}" must be true or false.`);
  const exporter = env.OTEL_TRACES_EXPORTER || 'none';
  if (exporter !== 'none' && exporter !== 'console') {
    throw new ConfigError(
      `OTEL_TRACES_EXPORTER "${exporter}" is not built into the demo: use none (default; spans are made and propagated, nothing is exported) ` +
        `or console. For OTLP, set OTEL_SDK_DISABLED=true and preload your own SDK (node -r @opentelemetry/auto-instrumentations-node/register …).`,
    );
  }
  return { enabled: disabled !== 'true', exporter };
}

/**
 * Registers the OpenTelemetry SDK (AsyncLocalStorage context, W3C trace context), so that the trace
 * of an HTTP request really reaches the outbox rows it writes, the publish and the consumer. Nothing
 * leaves the machine unless OTEL_TRACES_EXPORTER=console prints spans to stdout. `processors` are for
 * tests (an in-memory exporter). Returns undefined when OTEL_SDK_DISABLED=true (an SDK of your own).
 */
export function startTracing(env: NodeJS.ProcessEnv = process.env, processors: SpanProcessor[] = []): NodeTracerProvider | undefined {
  const { enabled, exporter } = tracingConfig(env);
  if (!enabled) return undefined;
  const spanProcessors = exporter === 'console' ? [new SimpleSpanProcessor(new ConsoleSpanExporter()), ...processors] : processors;
  const provider = new NodeTracerProvider({ spanProcessors });
  provider.register();
  return provider;
}
