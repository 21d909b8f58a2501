import { OutboxConfigurationError } from '../core/outbox.errors';
import { RecordingOutboxTransport } from '../testing';
import { checkTransportOptions } from './outbox-transports.resolver';

describe('checkTransportOptions: transport names', () => {
  const transport = new RecordingOutboxTransport();

  it.each([
    ['', 'it is empty'],
    ['partner\u0000', 'it contains the control character U+0000 at index 7'],
    ['p'.repeat(65), 'it has 65 characters, more than 64'],
  ])('refuses the name %j, naming the option, the escaped value and what is allowed', (name, problem) => {
    expect(() => checkTransportOptions({ transports: { [name]: transport } })).toThrow(OutboxConfigurationError);
    expect(() => checkTransportOptions({ transports: { [name]: transport } })).toThrow(
      new RegExp(`^OutboxModule option "transports": the transport name ".*" is refused: ${problem.replace(/[+.]/g, '\\$&')}\\. A transport name is a non-blank string of at most 64 characters`),
    );
  });

  it('takes a name of up to 64 characters', () => {
    expect(() => checkTransportOptions({ transports: { ['p'.repeat(64)]: transport } })).not.toThrow();
  });
});
