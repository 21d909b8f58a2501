import { AcknowledgedPositions } from './acknowledged-positions';
import { commit, message } from './stream-relay.fixtures';

describe('AcknowledgedPositions', () => {
  it('confirms only up to the last commit whose messages, and all before, are acknowledged', () => {
    const positions = new AcknowledgedPositions();
    const first = commit(10n, 'a', 'b');
    const second = commit(20n, 'c');
    positions.received(first);
    positions.received(second);
    positions.acknowledged([second.messages[0], first.messages[0]]);
    expect(positions.advance()).toBeUndefined();
    positions.acknowledged([first.messages[1]]);
    expect(positions.advance()).toBe(20n);
    expect(positions.confirmed).toBe(20n);
  });

  it('tells whether the commits it moved past carried messages, so that only those positions are saved', () => {
    const positions = new AcknowledgedPositions();
    positions.received({ lsn: 5n, messages: [] });
    expect(positions.advance()).toBe(5n);
    expect(positions.lastAdvanceCarriedMessages).toBe(false);
    const carrying = commit(10n, 'a');
    positions.received(carrying);
    positions.received({ lsn: 15n, messages: [] });
    positions.acknowledged(carrying.messages);
    expect(positions.advance()).toBe(15n);
    expect(positions.lastAdvanceCarriedMessages).toBe(true);
  });

  it('tells since when the oldest commit with unacknowledged messages has waited', () => {
    const positions = new AcknowledgedPositions();
    const first = commit(10n, 'a');
    positions.received({ lsn: 5n, messages: [] }, 1_000);
    positions.received(first, 2_000);
    positions.received(commit(20n, 'b'), 3_000);
    expect(positions.oldestWaitingSince).toBe(2_000);
    positions.acknowledged(first.messages);
    expect(positions.oldestWaitingSince).toBe(3_000);
  });

  it('refuses an acknowledgement of a commit it never received', () => {
    expect(() => new AcknowledgedPositions().acknowledged([message(5n, 0, 'a')])).toThrow('not open');
  });
});
