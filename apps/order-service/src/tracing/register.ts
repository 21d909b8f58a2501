// Imported first by main.ts: the SDK must be registered before any module captures a tracer or a context.
import { startTracing } from './tracing';

try {
  startTracing();
} catch (error) {
  console.error(error instanceof Error ? `${error.name}: ${error.message}` : error);
  process.exit(1);
}
