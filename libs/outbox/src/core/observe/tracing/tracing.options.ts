import { OutboxConfigurationError } from '../../outbox.errors';
import { invalidOption } from '../../outbox.messages';

export interface OutboxTracingOptions {
  /** Name of the tracer the publish spans come from. Default `'@nest-outbox/outbox'`. */
  tracerName?: string;
}

export interface ResolvedTracingOptions {
  tracerName: string;
}

export function resolveTracingOptions(option: unknown): ResolvedTracingOptions | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return { tracerName: '@nest-outbox/outbox' };
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    throw new OutboxConfigurationError(invalidOption('tracing', 'true, false or { tracerName? }', option));
  }
  const { tracerName = '@nest-outbox/outbox' } = option as OutboxTracingOptions;
  if (typeof tracerName !== 'string' || tracerName === '') throw new OutboxConfigurationError(invalidOption('tracing.tracerName', 'a non-empty string', tracerName));
  return { tracerName };
}
