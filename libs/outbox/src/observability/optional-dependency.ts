import { OutboxConfigurationError } from '../core/outbox.errors';
import { missingOptionalPackage } from '../core/outbox.messages';

/**
 * Loads an optional peer dependency the first time a feature that needs it is configured, so
 * that apps without metrics or tracing never need prom-client or OpenTelemetry installed.
 */
export function loadOptional<T>(packageName: string, option: string): T {
  try {
    return require(packageName) as T;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') {
      throw new OutboxConfigurationError(missingOptionalPackage(packageName, option));
    }
    throw error;
  }
}
