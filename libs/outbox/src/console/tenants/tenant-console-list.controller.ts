import { Get, Header, Inject, NotFoundException, Param, Req, StreamableFile } from '@nestjs/common';
import { readAsset } from '../console-assets';
import { OUTBOX_CONSOLE_OPTIONS } from '../outbox-console.constants';
import type { ResolvedConsoleOptions } from '../outbox-console.options';
import { tenantListHtml } from './tenant-list.page';
import { TenantConsoles, type TenantConsoleEntry } from './tenant-consoles';

const PAGE_POLICY = "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'self'; frame-ancestors 'none'";

/**
 * The tenants of a console mount over tenant outboxes: a page listing them (state, counts, a link
 * to each tenant's console at `<path>/<tenant>/`) and the same as JSON. Not decorated with
 * `@Controller`: `OutboxConsoleModule.forRoot({ tenants: true })` mounts a subclass at its path, behind its guard.
 */
export class TenantConsoleListController {
  constructor(
    private readonly consoles: TenantConsoles,
    @Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
  ) {}

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', PAGE_POLICY)
  @Header('Cache-Control', 'no-store')
  async page(@Req() request: { originalUrl?: string; url: string }): Promise<string> {
    const path = (request.originalUrl ?? request.url).split('?')[0];
    return tenantListHtml(path.endsWith('/') ? path : `${path}/`, await this.consoles.list(), this.options.refreshIntervalMs);
  }

  @Get('assets/:file')
  asset(@Param('file') file: string): StreamableFile {
    const asset = file === 'console.css' ? readAsset(file) : undefined;
    if (!asset) throw new NotFoundException(`No console asset "${file}".`);
    return new StreamableFile(asset.body, { type: asset.contentType });
  }

  @Get('api/tenants')
  tenants(): Promise<TenantConsoleEntry[]> {
    return this.consoles.list();
  }
}
