export const OUTBOX_CONSOLE_OPTIONS = Symbol('outbox:console-options');
