import { OutboxConfigurationError } from '../../core/outbox.errors';
import { Idempotent } from './idempotent.decorator';

describe('@Idempotent(consumer)', () => {
  it.each([['orders\u0000projector'], [''], ['x'.repeat(256)]])('refuses the consumer name %j when the class is declared, naming it escaped', (consumer) => {
    expect(() => Idempotent(consumer)).toThrow(OutboxConfigurationError);
    expect(() => Idempotent(consumer)).toThrow(/^Inbox consumer name ".*" is refused: .*A consumer name .* is a non-blank string of at most 255 characters, without control characters/);
  });

  it('names a NUL by its escape, never as the raw character', () => {
    expect(() => Idempotent('orders\u0000projector')).toThrow('"orders\\u0000projector" is refused: it contains the control character U+0000 at index 6');
  });
});
