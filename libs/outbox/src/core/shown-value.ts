// eslint-disable-next-line no-control-regex -- the point is to find them
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

/** A value as an error text shows it: quoted, control characters escaped (a NUL would cut the text in some terminals and logs), long ones cut. */
export function shownValue(value: unknown): string {
  if (typeof value !== 'string') return value === null || value === undefined ? String(value) : typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
  const cut = value.length > 200 ? `${value.slice(0, 200)}…` : value;
  return JSON.stringify(cut).replace(CONTROL_CHARACTERS, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
