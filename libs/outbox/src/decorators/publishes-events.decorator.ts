import { canHandOverEvents } from '../core/aggregate-events';
import { cannotHandOverEvents, invalidDecoratorOption } from '../core/outbox.messages';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { isDestinationName } from '../core/names';
import { declarePublishesEvents, type PublishesEventsOptions } from '../core/event-metadata';

/** Marks a TypeORM entity whose recorded events are written to the outbox when it is saved. */
export function PublishesEvents(options: PublishesEventsOptions = {}): ClassDecorator {
  return (target) => {
    for (const option of ['aggregateType', 'topic'] as const) {
      const value = options[option];
      const valid = option === 'topic' ? isDestinationName(value) : typeof value === 'string' && value.trim() !== '';
      if (value !== undefined && !valid) {
        throw new OutboxConfigurationError(invalidDecoratorOption('PublishesEvents', target.name, option, value));
      }
    }
    // Checked here rather than at save: an aggregate that cannot hand over its events would save without them, silently.
    if (!canHandOverEvents(target)) throw new OutboxConfigurationError(cannotHandOverEvents(target.name));
    declarePublishesEvents(target, options);
  };
}
