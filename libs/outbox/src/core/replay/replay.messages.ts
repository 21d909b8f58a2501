/** Texts of the replay of published messages (console, REST and CLI). */

export const replayNeedsReason = () =>
  'A replay needs a reason (a non-blank text of at most 500 characters, without control characters): it is stored on every replayed message ' +
  '("outbox-replay-reason" header, shown by "nest-outbox show <id>" and the console) and sent to consumers. Pass --reason "…" (CLI) or "reason" (REST).';

export const replayNeedsFilter = () =>
  'A replay needs at least one filter (type, aggregateType, aggregateId, destination, id, from/since or to/until), so that it never ' +
  're-publishes every kept message by accident. To replay every published message the table still keeps, confirm it: --all (CLI), "all": true (REST).';

export const replayBadBy = () => '"by" (who asks for the replay) must be a non-blank text of at most 255 characters, without control characters.';

export const replayEmptyTimeRange = (from: Date, to: Date) =>
  `The time range is empty: from/since ${from.toISOString()} is not before to/until ${to.toISOString()}.`;

export const replayNoSuchMessage = (id: string) => `No outbox message has id "${id}" (cleaned up already, or never written): nothing to replay.`;

export const replayNotPublished = (id: string, status: string) =>
  `Message "${id}" is ${status}, not published: a replay re-publishes published messages. ` +
  (status === 'dead' ? 'Requeue a dead message instead ("nest-outbox dead requeue <id>", or Requeue in the console).' : 'It is still on its way, or was given up (discarded).');

/** Why the WAL mode has rows at all: what its stream moved to the table instead of publishing it. */
const MOVED_TO_TABLE =
  'the messages the WAL mode moved to the outbox table (a publish that failed, a destination that was paused, ' +
  'or a later message of an aggregate held there)';

export const walKeepsNoRows = () =>
  'No published message of the outbox table matches, and this database streams the outbox through the WAL delivery mode ' +
  "(delivery: 'wal'), which keeps no row of what it published: those messages exist only in the consumers and the broker, and cannot be " +
  're-published from here. Replay them from the broker (a Kafka consumer group reset, for instance), or have the producer record the events again. ' +
  `Only ${MOVED_TO_TABLE} can be replayed, and none matches this filter.`;

export const walRowsOnly = (dryRun: boolean) =>
  'This database streams the outbox through the WAL delivery mode, which keeps no row of what it streamed: only ' +
  `${MOVED_TO_TABLE} ${dryRun ? 'would be replayed' : 'were replayed'}, not every message the stream published.`;
