import { BadRequestException, ConflictException, Get, Inject, NotFoundException, Optional, Param, Query, UsePipes, ValidationPipe } from '@nestjs/common';
import { OutboxAdminError } from '../../core/outbox.errors';
import { poisonOff } from '../../core/poison/poison.messages';
import type { PoisonRecord } from '../../core/poison/poison.port';
import { OutboxInbox } from '../../nest/inbox/outbox-inbox';
import type { PoisonReplays } from '../../nest/inbox/poison-replays';
import { ConsoleAction } from '../console-action.guard';
import type { MessageDetail } from '../../core/console/outbox-console.port';
import { OUTBOX_CONSOLE_OPTIONS } from '../outbox-console.constants';
import { DEFAULT_REDACTION as IDENTITY, type ResolvedConsoleOptions } from '../outbox-console.options';
import { PoisonQueryDto, PoisonRecordParams } from './poison-query.dto';

export interface PoisonPage {
  /** False when this app has no inbox, or its poison policy is off. */
  enabled: boolean;
  /** Consumers whose handler runs in this app, so their records can be replayed here. */
  replayable: string[];
  records: PoisonRecord[];
}

/**
 * The console's view of the inbox's poison records: list, read, replay, delete. Mounted by
 * `OutboxConsoleModule` next to the message admin, at the same path and behind the same guard.
 */
@UsePipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }))
export class OutboxPoisonConsoleController {
  constructor(
    @Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
    @Optional() private readonly inbox?: OutboxInbox,
  ) {}

  @Get('api/poison')
  async list(@Query() query: PoisonQueryDto): Promise<PoisonPage> {
    const poison = this.inbox?.poison;
    if (!poison) return { enabled: false, replayable: [], records: [] };
    return { enabled: true, replayable: poison.consumers(), records: (await poison.list({ consumer: query.consumer, state: query.state, limit: query.limit ?? 100 })).map((record) => this.redacted(record)) };
  }

  @Get('api/poison/:consumer/:key')
  get(@Param() params: PoisonRecordParams): Promise<PoisonRecord> {
    return admin(this.replays(), async (poison) => this.redacted(await poison.get(params.consumer, params.key)));
  }

  /** Runs the record's handler again with the stored message; 200 when it succeeded and the record is gone, 409 with the reason otherwise. */
  @ConsoleAction('api/poison/:consumer/:key/replay')
  async replay(@Param() params: PoisonRecordParams): Promise<{ consumer: string; key: string; replayed: true }> {
    await admin(this.replays(), (poison) => poison.replay(params.consumer, params.key));
    return { consumer: params.consumer, key: params.key, replayed: true };
  }

  /** Drops the record, and with it the message: for a message that must never be handled. */
  @ConsoleAction('api/poison/:consumer/:key/delete')
  async remove(@Param() params: PoisonRecordParams): Promise<{ consumer: string; key: string; deleted: true }> {
    await admin(this.replays(), (poison) => poison.remove(params.consumer, params.key));
    return { consumer: params.consumer, key: params.key, deleted: true };
  }

  /** The console's `redactPayload` applies to recorded messages too: to an envelope's payload, or to the whole of anything else. */
  private redacted(record: PoisonRecord): PoisonRecord {
    try {
      const parsed: unknown = JSON.parse(record.raw);
      const envelope = typeof parsed === 'object' && parsed !== null && 'payload' in parsed ? (parsed as Record<string, unknown>) : undefined;
      const shown = envelope
        ? { ...envelope, payload: this.options.redactPayload(envelope.payload, envelope as unknown as MessageDetail) }
        : this.options.redactPayload(parsed, { payload: parsed } as unknown as MessageDetail);
      return { ...record, raw: JSON.stringify(shown) ?? 'null' };
    } catch {
      // Cut short (not JSON any more) or refused by the redactor: shown only as redacted when a redactor is set.
      return this.options.redactPayload === IDENTITY ? record : { ...record, raw: '"[redacted]"' };
    }
  }

  private replays(): PoisonReplays {
    if (!this.inbox?.poison) throw new NotFoundException(poisonOff());
    return this.inbox.poison;
  }
}

/** An admin error as its HTTP answer: unknown record 404, not replayable or replay failed 409. */
async function admin<T>(poison: PoisonReplays, action: (poison: PoisonReplays) => Promise<T>): Promise<T> {
  try {
    return await action(poison);
  } catch (error) {
    if (!(error instanceof OutboxAdminError)) throw error;
    if (error.reason === 'not-found') throw new NotFoundException(error.message);
    if (error.reason === 'conflict') throw new ConflictException(error.message);
    throw new BadRequestException(error.message);
  }
}
