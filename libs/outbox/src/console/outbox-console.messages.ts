/** Texts of the console's Nest layer. */

const show = (value: unknown) => (typeof value === 'function' ? 'a function' : JSON.stringify(value) ?? String(value));

export const invalidConsoleOption = (option: string, expected: string, got: unknown) =>
  `OutboxConsoleModule option "${option}" must be ${expected}; got ${show(got)}.`;

export const unknownConsoleOption = (key: string, known: readonly string[]) =>
  `OutboxConsoleModule has no option "${key}". Known options: ${known.join(', ')}.`;

export const consoleNeedsAuth = () =>
  'OutboxConsoleModule needs a "guard" (a Nest guard that authenticates operators). To serve it without any authentication, ' +
  'for a local demo only, set "noAuth: true" explicitly.';

export const consoleWithoutAuth = (path: string) =>
  `The outbox console at /${path} is served WITHOUT authentication (noAuth: true): anyone who reaches this port can requeue and discard messages. ` +
  'Set a "guard" before this runs anywhere but a developer machine.';

export const consoleMounted = (path: string, readOnly: boolean) => `Outbox console at /${path}${readOnly ? ' (read-only)' : ''}`;

export const consoleReadOnly = () => 'The outbox console is read-only (readOnly: true): actions are disabled.';

export const mutationsNeedJson = () => 'Console actions take a JSON body: send Content-Type: application/json.';

export const consoleNeedsPackage = (name: string) =>
  `OutboxConsoleModule needs the package "${name}" (request validation). Install it: npm install class-validator class-transformer`;

export const pausedLog = (destination: string, reason: string | null | undefined) =>
  `Destination "${destination}" paused from the console${reason?.trim() ? `: ${reason.trim()}` : ' (no reason given)'}; no relay publishes to it until it is resumed.`;

export const PAYLOAD_WITHHELD = '(withheld: the redactPayload hook failed; see the application log)';

export const redactionFailed = (id: string, reason: string) =>
  `The console's redactPayload hook threw for message "${id}" (${reason}); its payload was withheld from the operator. Fix the hook.`;

export const replayedLog = (count: number, replayId: string, reason: string) =>
  `Replay ${replayId} from the console: ${count} published message(s) pending again, reason: ${JSON.stringify(reason.trim())}.`;
