/** Texts of `nest-outbox asyncapi`, each saying what to pass. */

export const ASYNCAPI_USAGE = `  asyncapi --app <file> [--outbox <name>] [--out <file>] [--yaml]
                              the AsyncAPI 3.0 document of what the app publishes; <file> is a
                              compiled JavaScript file whose default export (or AppModule export)
                              is the app's root module, or a function returning it; its outbox
                              starts no relay (the database its modules open is still opened)`;

const WHAT_TO_PASS =
  'Pass --app <file>: a compiled JavaScript file (e.g. dist/asyncapi.js) whose default export, or export named AppModule, ' +
  'is your root Nest module (a class or a DynamicModule) or a function returning one.';

export const missingApp = (command = 'asyncapi') => `${command} needs the app. ${WHAT_TO_PASS}`;

export const appFileNotFound = (path: string, command = 'asyncapi') => `${command} --app "${path}": no such file. ${WHAT_TO_PASS}`;

export const appFileFailed = (path: string, reason: string, command = 'asyncapi') => `${command} --app "${path}" could not be loaded: ${reason}. ${WHAT_TO_PASS}`;

export const noModuleExported = (path: string, exported: string[], command = 'asyncapi') =>
  `${command} --app "${path}" exports ${exported.length > 0 ? exported.map((name) => `"${name}"`).join(', ') : 'nothing'}, ` +
  `and no module. ${WHAT_TO_PASS}`;

export const appFailedToStart = (path: string, reason: string, command = 'asyncapi') =>
  `${command} --app "${path}": the app's module did not start: ${reason}. The outbox relays nothing during this command, ` +
  'but your own modules start as usual: the databases they open must be reachable.';

export const noOutboxModule = (path: string) =>
  `asyncapi --app "${path}": the app does not import OutboxModule (from @nest-outbox/outbox), so there is nothing to describe. ` +
  'Pass the root module that imports it.';

export const unexpectedArgument = (argument: string) => `asyncapi takes no argument "${argument}". Usage:\n${ASYNCAPI_USAGE}`;

export const severalOutboxes = (path: string, declared: readonly string[]) =>
  `asyncapi --app "${path}": the app declares ${declared.length} outboxes (${declared.join(', ')}), each with a document of its own. ` +
  `Pass --outbox <name> for one of them ("default" is the one declared without a name).`;

export const noSuchOutbox = (path: string, outbox: string, declared: readonly string[]) =>
  `asyncapi --app "${path}" --outbox "${outbox}": the app declares no outbox of that name. Its outboxes: ${declared.join(', ')} ("default" is the one declared without a name).`;
