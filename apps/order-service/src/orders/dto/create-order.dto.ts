import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsInt, IsNotEmpty, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateNested } from 'class-validator';

export class OrderItemDto {
  @IsString()
  @Matches(/^[A-Z0-9-]{1,64}$/, { message: 'sku must be 1–64 upper-case letters, digits or dashes' })
  sku: string;

  @IsInt()
  @Min(1)
  @Max(10_000)
  quantity: number;

  @IsInt()
  @Min(0)
  @Max(100_000_000)
  unitPriceCents: number;
}

export class CreateOrderDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  // No control characters: PostgreSQL refuses NUL in text, and none belongs in an id.
  @Matches(/^[^\u0000-\u001f\u007f]+$/, { message: 'customerId must not contain control characters' })
  customerId: string;

  @IsArray()
  @ValidateNested({ each: true })
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @Type(() => OrderItemDto)
  items: OrderItemDto[];
}

export class CancelOrderDto {
  @IsOptional()
  @IsString()
  @MaxLength(200)
  reason?: string;
}
