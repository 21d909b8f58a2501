import { findOptionalPeer } from '../optional-peer';
import { OutboxWriteError } from '../outbox.errors';
import { invalidPayload, missingValidationPackage } from './typed-events.messages';

interface ValidationProblem {
  property: string;
  constraints?: Record<string, string>;
  children?: ValidationProblem[];
}

interface Validator {
  validateSync(target: object, options: object): ValidationProblem[];
}

interface Transformer {
  plainToInstance(cls: Function, plain: unknown): object;
}

// class-validator and class-transformer are optional peers, loaded only when an event asks for validation.
function load<T>(name: string, eventType: string): T {
  const loaded = findOptionalPeer<T>(name);
  if (loaded === undefined) throw new OutboxWriteError(missingValidationPackage(name, eventType));
  return loaded;
}

/** Validates `payload` as an instance of `eventClass`; returns the field problems, `path (constraint texts)` each. */
export function payloadProblems(eventType: string, eventClass: Function, payload: unknown): { instance: object; problems: string[] } {
  const { validateSync } = load<Validator>('class-validator', eventType);
  const instance =
    payload instanceof eventClass ? (payload as object) : load<Transformer>('class-transformer', eventType).plainToInstance(eventClass, payload ?? {});
  // Unknown nested values are left to the declared decorators; whitelisting is the caller's choice.
  const problems = flatten(validateSync(instance, { forbidUnknownValues: false }));
  return { instance, problems };
}

/** Fails the save, naming each bad field, when a payload does not satisfy its event class's validation. */
export function validatePayloadForSave(eventType: string, eventClass: Function, payload: unknown): void {
  const { problems } = payloadProblems(eventType, eventClass, payload);
  if (problems.length > 0) throw new OutboxWriteError(invalidPayload(eventType, problems, 'save'));
}

function flatten(errors: ValidationProblem[], prefix = ''): string[] {
  return errors.flatMap((error) => {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    const own = error.constraints ? [`"${path}" (${Object.values(error.constraints).join(', ')})`] : [];
    return [...own, ...flatten(error.children ?? [], path)];
  });
}
