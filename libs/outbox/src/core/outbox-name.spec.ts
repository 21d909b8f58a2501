import { ofOutbox } from './outbox-name';

describe('ofOutbox', () => {
  it('names a named outbox in its log lines, so that two relays of one app are told apart', () => {
    expect(`Relay r-1${ofOutbox('eu')} publishing "outbox_messages"`).toBe('Relay r-1 of outbox "eu" publishing "outbox_messages"');
    expect(`Relay r-1${ofOutbox('us')} publishing "outbox_messages"`).not.toBe(`Relay r-1${ofOutbox('eu')} publishing "outbox_messages"`);
  });

  it('adds nothing for the outbox declared without a name', () => {
    expect(`Relay r-1${ofOutbox(undefined)} publishing "outbox_messages"`).toBe('Relay r-1 publishing "outbox_messages"');
  });
});
