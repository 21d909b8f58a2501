import { formatLsn, parseLsn } from './stream-message';

describe('LSN text', () => {
  it('round-trips', () => {
    expect(formatLsn(parseLsn('16/B374D848'))).toBe('16/B374D848');
    expect(parseLsn('1/0')).toBe(1n << 32n);
  });
});
