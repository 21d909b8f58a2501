/** Texts of `nest-outbox replay` and `nest-outbox show`. */

export const REPLAY_USAGE = `  replay --<filter> ... --reason <text>
                              re-publish published messages the table still keeps, with their ids,
                              to their destinations, in their original order (docs/console-and-cli.md)
      filters: --aggregate-type --aggregate-id --type --destination --since <ISO> --until <ISO>
      --reason <text>         why (required); sent as the "outbox-replay-reason" header, shown by show
      --by <name>             who asks (default: the OS user)
      --dry-run               only count; --all replays every kept message (no filter); --json
  replay <id> --reason <text> one published message
  show <id>                   one message in full: status, headers (replays), payload, errors (JSON)`;

export const replayNeedsReasonFlag = () =>
  '"replay" needs --reason "<why>": a non-blank text of at most 500 characters, without control characters. ' +
  'It is stored on every replayed message and sent with it, so that operators and consumers can tell why it came again.';

export const replayNeedsFilterFlag = () =>
  '"replay" needs at least one filter: --aggregate-type, --aggregate-id, --type, --destination, --since <ISO> or --until <ISO> ' +
  '(or a message id). To replay every published message the table keeps, pass --all.';

export const replayBadFlag = (flag: string, value: string, expected: string) => `--${flag} ${JSON.stringify(value)} is refused: ${expected}.`;

export const replayTwoBounds = (a: string, b: string) => `--${a} and --${b} are the same bound: pass one of them.`;

export const replayAllWithFilter = () => '--all replays every kept message: leave it out when you pass a filter.';
