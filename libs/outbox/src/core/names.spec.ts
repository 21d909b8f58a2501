import { OutboxConfigurationError } from './outbox.errors';
import { isDestinationName, nameProblem, shownValue, validateSchemaName, validateTableName } from './names';
import { checkConsumerName } from './inbox/inbox-settings';
import { resolveOutboxSettings } from './outbox-options';

describe('names an app or an operator passes', () => {
  it.each([
    ['', 'it is empty'],
    ['   ', 'it is blank'],
    ['billing\u0000', 'it contains the control character U+0000 at index 7'],
    ['a\tb', 'it contains the control character U+0009 at index 1'],
    ['x\u007f', 'it contains the control character U+007F at index 1'],
    ['x'.repeat(256), 'it has 256 characters, more than 255'],
    [42, 'it is number, not a string'],
    [null, 'it is null, not a string'],
  ])('nameProblem(%j) says %s', (value, problem) => {
    expect(nameProblem(value)).toBe(problem);
  });

  it('passes what a consumer or destination may be, up to 255 characters, any script', () => {
    for (const name of ['billing.order-projector', 'orders', 'x'.repeat(255), 'commandes-été', '注文']) expect(nameProblem(name)).toBeUndefined();
  });

  it('shows a value with its control characters escaped and a long one cut', () => {
    expect(shownValue('a\u0000b\u007f\n')).toBe('"a\\u0000b\\u007f\\n"');
    expect(shownValue('y'.repeat(300))).toBe(`"${'y'.repeat(200)}…"`);
  });

  it('refuses a consumer name with a NUL, naming it escaped and saying what is allowed', () => {
    const refused = () => checkConsumerName('billing\u0000projector');
    expect(refused).toThrow(OutboxConfigurationError);
    expect(refused).toThrow(
      'Inbox consumer name "billing\\u0000projector" is refused: it contains the control character U+0000 at index 7. A consumer name (the consumer argument of ' +
        'process(), processIn(), processEnvelope() and @Idempotent()) is a non-blank string of at most 255 characters, without control characters (U+0000 to U+001F, U+007F).',
    );
  });

  it.each([[''], ['  '], ['line\nbreak'], ['x'.repeat(256)], [undefined]])('refuses the consumer name %j', (name) => {
    expect(() => checkConsumerName(name)).toThrow(/^Inbox consumer name .* is refused: it (is|contains|has) /);
  });

  it('refuses a destination over 255 characters (the column is varchar(255)) or with a control character, in the module options too', () => {
    expect(isDestinationName('x'.repeat(255))).toBe(true);
    expect(isDestinationName('x'.repeat(256))).toBe(false);
    expect(isDestinationName('orders\u0000')).toBe(false);
    expect(() => resolveOutboxSettings({ defaultTopic: 'orders\u0000' }, () => 'relay-1')).toThrow(/Invalid OutboxModule option "defaultTopic": expected a topic, queue or subject name: .*got "orders\\u0000"/);
    expect(() => resolveOutboxSettings({ routes: [{ transport: 'kafka', topic: 't'.repeat(256) }] } as never, () => 'relay-1')).toThrow(/"routes\[0\]\.topic"/);
  });

  it('refuses table and schema names that are not plain identifiers, naming the option and the escaped value', () => {
    expect(() => validateTableName('outbox\u0000')).toThrow('Invalid OutboxModule option "tableName": expected an identifier (letters, digits and _, not starting with a digit, at most 63 characters), got "outbox\\u0000".');
    expect(() => validateTableName('')).toThrow(/"tableName".*got ""/);
    expect(() => validateTableName('t'.repeat(64))).toThrow(/"tableName"/);
    expect(() => validateSchemaName('billing\n')).toThrow(/Invalid OutboxModule option "schema": .*got "billing\\n"/);
  });
});
