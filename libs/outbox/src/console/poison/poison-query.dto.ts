import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { POISON_STATES, type PoisonState } from '../../core/poison/poison.port';

// Consumer names and record keys are text columns: a NUL or another control character can match nothing, and PostgreSQL refuses a NUL.
const PRINTABLE = /^[^\u0000-\u001f\u007f]*$/;

/** `GET <path>/api/poison`: optional consumer and state, and a page size. */
export class PoisonQueryDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) @Matches(PRINTABLE, { message: 'consumer must not contain control characters' }) consumer?: string;
  @IsOptional() @IsIn(POISON_STATES) state?: PoisonState;
  @IsOptional() @Transform(({ value }) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value)) @IsInt() @Min(1) @Max(1_000) limit?: number;
}

/** `<path>/api/poison/:consumer/:key`. */
export class PoisonRecordParams {
  @IsString() @MinLength(1) @MaxLength(255) @Matches(PRINTABLE, { message: 'consumer must not contain control characters' }) consumer: string;
  @IsString() @MinLength(1) @MaxLength(255) @Matches(PRINTABLE, { message: 'key must not contain control characters' }) key: string;
}
