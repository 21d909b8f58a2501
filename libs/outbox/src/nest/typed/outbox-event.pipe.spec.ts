import { OutboxEvent } from '../../decorators/outbox-event.decorator';
import { OutboxNonRetryableError } from '../../core/outbox.errors';
import { OutboxEventPipe } from './outbox-event.pipe';

@OutboxEvent('pipes.thing-renamed', { version: 2, upcast: ({ payload }) => ({ name: (payload as { title: string }).title }) })
class ThingRenamed {
  name!: string;

  shout(): string {
    return this.name.toUpperCase();
  }
}

describe('OutboxEventPipe', () => {
  const pipe = new OutboxEventPipe(ThingRenamed);
  const envelope = (version: number, payload: unknown) =>
    ({ id: 'i', type: 'pipes.thing-renamed', version, aggregateType: 'thing', aggregateId: 't', occurredAt: '', headers: {}, payload });

  it('turns the envelope into an instance of the event class, upcasting older versions', () => {
    expect(pipe.transform(envelope(2, { name: 'lamp' })).shout()).toBe('LAMP');
    expect(pipe.transform(envelope(1, { title: 'desk' })).shout()).toBe('DESK');
  });

  it('refuses another event type with a non-retryable error naming both types', () => {
    const wrong = { ...envelope(2, {}), type: 'pipes.thing-removed' };
    expect(() => pipe.transform(wrong)).toThrow(OutboxNonRetryableError);
    expect(() => pipe.transform(wrong)).toThrow(/type "pipes\.thing-renamed", got "pipes\.thing-removed"/);
  });
});
