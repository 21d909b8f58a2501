import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsISO8601, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import type { MessageFilter } from '../../core/console/outbox-console.port';
import type { OutboxMessageStatus } from '../../core/outbox-message';

const STATUSES: OutboxMessageStatus[] = ['pending', 'published', 'dead', 'discarded'];

/** The filter fields shared by the message list and the bulk actions. */
export class MessageFilterDto {
  @IsOptional() @IsIn(STATUSES) status?: OutboxMessageStatus;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) type?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) aggregateType?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) aggregateId?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) destination?: string;
  @IsOptional() @IsUUID() id?: string;
  /** Inserted at or after, ISO-8601. */
  @IsOptional() @IsISO8601({ strict: true }) from?: string;
  /** Inserted before, ISO-8601. */
  @IsOptional() @IsISO8601({ strict: true }) to?: string;
}

/** `GET <path>/api/messages`: filters, `before` (keyset cursor from the previous page's `next`) and `limit`. */
export class MessageQueryDto extends MessageFilterDto {
  @IsOptional() @Matches(/^[0-9]{1,19}$/, { message: 'before must be the "next" position of the previous page' }) before?: string;
  @IsOptional() @Transform(({ value }) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value)) @IsInt() @Min(1) @Max(1_000) limit?: number;
}

/** `POST <path>/api/bulk/{requeue,discard}`: dead rows matching the filter; `dryRun: true` only counts them. */
export class BulkActionDto extends MessageFilterDto {
  @IsBoolean() dryRun: boolean;
}

/** `GET <path>/api/summary?fresh=true` reads the stats now instead of serving the shared cached snapshot. */
export class SummaryQueryDto {
  @IsOptional() @IsIn(['true', 'false']) fresh?: 'true' | 'false';
}

export class DestinationDto {
  @IsString() @MinLength(1) @MaxLength(255) destination: string;
}

export class MessageIdParams {
  @IsUUID() id: string;
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
