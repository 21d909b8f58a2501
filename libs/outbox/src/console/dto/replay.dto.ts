import { IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';
import { ConsoleError } from '../../core/console/console.error';
import type { ReplayFilter } from '../../core/replay/replay.port';
import { IsStorableText } from './field-checks';
import { MessageFilterDto, toFilter } from './message-filter.dto';

/** `POST <path>/api/messages/:id/replay`: one published message again, to its destination, with its id. */
export class ReplayOneDto {
  /** Why; required. Stored on the message (`outbox-replay-reason` header) and sent with it. */
  @IsString() @MaxLength(500) @IsStorableText() reason: string;
}

/**
 * `POST <path>/api/bulk/replay`: every published message matching the filter (`status` may only be
 * `published`). `dryRun: true` only counts; `all: true` confirms a replay without any filter.
 */
export class BulkReplayDto extends MessageFilterDto {
  @IsString() @MaxLength(500) @IsStorableText() reason: string;
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
