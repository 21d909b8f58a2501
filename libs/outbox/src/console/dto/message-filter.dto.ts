import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsISO8601, IsOptional, IsString, IsUUID, Max, MaxLength, Min, MinLength } from 'class-validator';
import type { MessageFilter } from '../../core/console/outbox-console.port';
import type { OutboxMessageStatus } from '../../core/outbox-message';
import { IsInstant, IsPosition, IsStorableText } from './field-checks';

const STATUSES: OutboxMessageStatus[] = ['pending', 'published', 'dead', 'discarded'];

/** The filter fields shared by the message list and the bulk actions. */
export class MessageFilterDto {
  @IsOptional() @IsIn(STATUSES) status?: OutboxMessageStatus;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) @IsStorableText() type?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) @IsStorableText() aggregateType?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) @IsStorableText() aggregateId?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) @IsStorableText() destination?: string;
  @IsOptional() @IsUUID() id?: string;
  /** Inserted at or after, ISO-8601. */
  @IsOptional() @IsISO8601({ strict: true }) @IsInstant() from?: string;
  /** Inserted before, ISO-8601. */
  @IsOptional() @IsISO8601({ strict: true }) @IsInstant() to?: string;
}

/** `GET <path>/api/messages`: filters, `before` (keyset cursor from the previous page's `next`) and `limit`. */
export class MessageQueryDto extends MessageFilterDto {
  @IsOptional() @IsPosition() before?: string;
  @IsOptional() @Transform(({ value }) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value)) @IsInt() @Min(1) @Max(1_000) limit?: number;
  /** `true`: only rows waiting in backoff (pending, failed, next attempt later than now). */
  @IsOptional() @IsIn(['true', 'false']) retrying?: 'true' | 'false';
}

/**
 * `POST <path>/api/bulk/{requeue,discard}`: dead rows matching the filter; `bulk/retry-now`: rows
 * waiting in backoff. `dryRun: true` only counts them.
 */
export class BulkActionDto extends MessageFilterDto {
  @IsBoolean() dryRun: boolean;
}

/** `GET <path>/api/summary?fresh=true` reads the stats now instead of serving the shared cached snapshot. */
export class SummaryQueryDto {
  @IsOptional() @IsIn(['true', 'false']) fresh?: 'true' | 'false';
}

export class DestinationDto {
  @IsString() @MinLength(1) @MaxLength(255) @IsStorableText() destination: string;
}

/** `POST <path>/api/destinations/pause`. */
export class PauseDto extends DestinationDto {
  /** Why, for the operators who see the pause later (console, CLI `status`, health, logs). Default: none. */
  @IsOptional() @IsString() @MaxLength(500) @IsStorableText() reason?: string;
  /** Pause a destination that no row has ever used (a new topic, or a typo). Default `false`: refused with 400. */
  @IsOptional() @IsBoolean() confirmUnknown?: boolean;
}

export class MessageIdParams {
  @IsUUID() id: string;
  /** On a mount over tenant outboxes, the tenant of the URL (`<path>/<tenant>/api/…`), checked when the request's target is found. */
  @IsOptional() @IsString() tenant?: string;
}

export function toFilter(dto: MessageFilterDto): MessageFilter {
  return {
    status: dto.status,
    type: dto.type,
    aggregateType: dto.aggregateType,
    aggregateId: dto.aggregateId,
    destination: dto.destination,
    id: dto.id,
    from: dto.from === undefined ? undefined : new Date(dto.from),
    to: dto.to === undefined ? undefined : new Date(dto.to),
  };
}
