import {
  BadRequestException,
  Body,
  Get,
  Header,
  Inject,
  NotFoundException,
  Param,
  Query,
  Req,
  StreamableFile,
  UseFilters,
  UsePipes,
  ValidationPipe,
} from '@nestjs/common';
import type { BulkOutcome, MessagePage } from '../core/console/outbox-console';
import type { MessageDetail, PausedDestination } from '../core/console/outbox-console.port';
import { pageHtml, readAsset } from './console-assets';
import { ConsoleAction } from './console-action.guard';
import { ConsoleErrorFilter } from './console-error.filter';
import { BulkActionDto, DestinationDto, MessageIdParams, MessageQueryDto, PauseDto, SummaryQueryDto, toFilter } from './dto/message-filter.dto';
import { OUTBOX_CONSOLE_OPTIONS } from './outbox-console.constants';
import type { ResolvedConsoleOptions } from './outbox-console.options';
import { OutboxConsoleService, type ConsoleSummary } from './outbox-console.service';
import type { ReplayOutcome } from '../core/replay/outbox-replay';
import { BulkReplayDto, ReplayOneDto, toReplayFilter } from './dto/replay.dto';

// The page loads its script and style from this origin only; nothing inline, nothing from a CDN.
const PAGE_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'self'; frame-ancestors 'none'";

/**
 * The page and the REST admin. Not decorated with `@Controller`: `OutboxConsoleModule.forRoot`
 * mounts a subclass at the configured path, behind the configured guard.
 */
@UsePipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }))
@UseFilters(ConsoleErrorFilter)
export class OutboxConsoleController {
  constructor(
    private readonly service: OutboxConsoleService,
    @Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
  ) {}

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', PAGE_POLICY)
  @Header('Cache-Control', 'no-store')
  page(@Req() request: { originalUrl?: string; url: string }): string {
    const path = (request.originalUrl ?? request.url).split('?')[0];
    return pageHtml(path.endsWith('/') ? path : `${path}/`, this.options.refreshIntervalMs, this.service.heading() ?? this.options.outbox);
  }

  @Get('assets/:file')
  asset(@Param('file') file: string): StreamableFile {
    const asset = readAsset(file);
    if (!asset) throw new NotFoundException(`No console asset "${file}".`);
    return new StreamableFile(asset.body, { type: asset.contentType });
  }

  @Get('api/summary')
  summary(@Query() query: SummaryQueryDto): Promise<ConsoleSummary> {
    return this.service.summary(query.fresh === 'true');
  }

  @Get('api/messages')
  list(@Query() query: MessageQueryDto): Promise<MessagePage> {
    const limit = query.limit ?? 50;
    if (limit > this.options.maxPageSize) {
      throw new BadRequestException([`limit must not be greater than ${this.options.maxPageSize}`]);
    }
    return this.service.list({ ...toFilter(query), retrying: query.retrying === 'true' || undefined }, query.before ?? null, limit);
  }

  @Get('api/messages/:id')
  get(@Param() params: MessageIdParams): Promise<MessageDetail> {
    return this.service.get(params.id);
  }

  @Get('api/destinations/paused')
  paused(): Promise<PausedDestination[]> {
    return this.service.paused();
  }

  @ConsoleAction('api/messages/:id/requeue')
  async requeue(@Param() params: MessageIdParams): Promise<{ id: string; status: 'pending' }> {
    await this.service.requeue(params.id);
    return { id: params.id, status: 'pending' };
  }

  @ConsoleAction('api/messages/:id/discard')
  async discard(@Param() params: MessageIdParams): Promise<{ id: string; status: 'discarded' }> {
    await this.service.discard(params.id);
    return { id: params.id, status: 'discarded' };
  }

  /** "Retry now": a row waiting in backoff becomes due now; its attempts are kept. */
  @ConsoleAction('api/messages/:id/retry-now')
  async retryNow(@Param() params: MessageIdParams): Promise<{ id: string; status: 'pending'; retryNow: true }> {
    await this.service.retryNow(params.id);
    return { id: params.id, status: 'pending', retryNow: true };
  }

  @ConsoleAction('api/bulk/retry-now')
  bulkRetryNow(@Body() body: BulkActionDto): Promise<BulkOutcome> {
    return this.service.bulkRetryNow(toFilter(body), body.dryRun);
  }

  @ConsoleAction('api/bulk/requeue')
  bulkRequeue(@Body() body: BulkActionDto): Promise<BulkOutcome> {
    return this.service.bulkRequeue(toFilter(body), body.dryRun);
  }

  @ConsoleAction('api/bulk/discard')
  bulkDiscard(@Body() body: BulkActionDto): Promise<BulkOutcome> {
    return this.service.bulkDiscard(toFilter(body), body.dryRun);
  }

  /** Re-publishes one published message, with its id, to its destination (see docs/console-and-cli.md, "Replay"). */
  @ConsoleAction('api/messages/:id/replay')
  replay(@Param() params: MessageIdParams, @Body() body: ReplayOneDto): Promise<ReplayOutcome> {
    return this.service.replay({ filter: { id: params.id }, reason: body.reason });
  }

  @ConsoleAction('api/bulk/replay')
  bulkReplay(@Body() body: BulkReplayDto): Promise<ReplayOutcome> {
    return this.service.replay({ filter: toReplayFilter(body), reason: body.reason, dryRun: body.dryRun, all: body.all });
  }

  @ConsoleAction('api/destinations/pause')
  async pause(@Body() body: PauseDto): Promise<{ destination: string; paused: true; changed: boolean }> {
    const changed = await this.service.pause(body.destination, { reason: body.reason, confirmUnknown: body.confirmUnknown });
    return { destination: body.destination, paused: true, changed };
  }

  @ConsoleAction('api/destinations/resume')
  async resume(@Body() body: DestinationDto): Promise<{ destination: string; paused: false; changed: boolean }> {
    return { destination: body.destination, paused: false, changed: await this.service.resume(body.destination) };
  }
}
