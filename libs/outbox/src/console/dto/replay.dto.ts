import { IsBoolean, IsOptional, ValidateBy } from 'class-validator';
import { ConsoleError } from '../../core/console/console.error';
import { nameProblem } from '../../core/names';
import type { ReplayFilter } from '../../core/replay/replay.port';
import { IsStorableText } from './field-checks';
import { MessageFilterDto, toFilter } from './message-filter.dto';

const MAX_REASON = 500;

/**
 * The replay's reason, in one check with one message whatever is wrong: separate string and length
 * checks answered a request without a reason with "must be shorter than or equal to 500 characters".
 */
function IsReplayReason(): PropertyDecorator {
  return ValidateBy({
    name: 'isReplayReason',
    validator: {
      // Blank text and control characters are the replay's own check (OutboxReplay), which names the field.
      validate: (value) => typeof value === 'string' && value.length <= MAX_REASON,
      defaultMessage: (args) =>
        `reason is required: a text of at most ${MAX_REASON} characters (${nameProblem(args?.value, MAX_REASON)}). ` +
        `It is stored on every replayed message and sent to consumers.`,
    },
  });
}

/** `POST <path>/api/messages/:id/replay`: one published message again, to its destination, with its id. */
export class ReplayOneDto {
  /** Why; required. Stored on the message (`outbox-replay-reason` header) and sent with it. */
  @IsReplayReason() @IsStorableText() reason: string;
}

/**
 * `POST <path>/api/bulk/replay`: every published message matching the filter (`status` may only be
 * `published`). `dryRun: true` only counts; `all: true` confirms a replay without any filter.
 */
export class BulkReplayDto extends MessageFilterDto {
  @IsReplayReason() @IsStorableText() reason: string;
  @IsBoolean() dryRun: boolean;
  @IsOptional() @IsBoolean() all?: boolean;
}

/** The filter of a replay; a `status` other than `published` is refused (400, naming the field). */
export function toReplayFilter(dto: MessageFilterDto): ReplayFilter {
  if (dto.status !== undefined && dto.status !== 'published') {
    throw new ConsoleError(`"status" must be "published" (or left out) for a replay: it re-publishes published messages, and "${dto.status}" was given.`, 'invalid', 'status');
  }
  const { status: _status, retrying: _retrying, ...filter } = toFilter(dto);
  return filter;
}
