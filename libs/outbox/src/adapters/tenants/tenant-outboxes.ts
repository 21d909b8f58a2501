import type { ConnectionTarget } from '../connection/outbox-connection.options';
import { errorText } from '../../core/error-text';
import { OutboxWriteError } from '../../core/outbox.errors';
import { checkTenantList, type TenantDatabase } from './tenant-database';
import { TenantOutbox, type TenantOutboxShared } from './tenant-outbox';
import { tenantListFailed, tenantNotOpen, tenantOpenFailed, unknownTenant } from './tenants.messages';

export interface TenantOutboxesConfig {
  /** The tenants now; read at start and every `refreshIntervalMs`. */
  list: () => Promise<readonly TenantDatabase[]> | readonly TenantDatabase[];
  refreshIntervalMs: number;
  poolSize: number;
  /** How long a removed tenant's relay may finish its batch before its pool is closed. */
  closeTimeoutMs: number;
  shared: TenantOutboxShared;
}

/** A tenant as `status()` reports it. */
export interface TenantStatus {
  id: string;
  /**
   * `open`: its relay runs; `opening`: its first opening is under way (at most `connectTimeoutMs` and a
   * statement); `failing`: it could not be opened (see `error`), tried again at each refresh.
   */
  state: 'open' | 'opening' | 'failing';
  /**
   * `failing`: why the tenant could not be opened. `open`: present while its relay's rounds fail — the
   * latest failed claim or settle (a refused connection, a statement past `queryTimeoutMs`) — and
   * gone once a round reaches the database both ways.
   */
  error?: string;
  /** With an `error`: since when — the first failed opening, or the relay's first failure since it last completed a round. */
  failingSince?: Date;
}

interface Entry {
  tenant: TenantDatabase;
  outbox?: TenantOutbox;
  error?: string;
  failingSince?: Date;
}

/**
 * The outboxes of a changing set of tenant databases: the list is read at start and then every
 * `refreshIntervalMs`; a tenant that appears gets its pool and relay, one that goes away has its
 * relay stopped and its pool closed, one whose url changed is reopened. Each tenant opens on its
 * own: one whose database does not answer is reported and tried again, and never holds back the
 * others. The relays share `shared.turns`, so the tenants take their rounds in turn.
 */
export class TenantOutboxes {
  private readonly entries = new Map<string, Entry>();
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly config: TenantOutboxesConfig) {}

  /** Reads the list and opens every tenant (waiting for each to open or fail); then refreshes on the interval. */
  async start(): Promise<void> {
    await this.refresh();
    if (!this.stopped) this.timer = setInterval(() => void this.refresh(), this.config.refreshIntervalMs);
  }

  /** Reads the list now and applies it; a refresh already running is awaited instead of run twice. */
  refresh(): Promise<void> {
    this.refreshing ??= this.applyList().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** The open outbox of the tenant; throws, naming it and what to do, for one the list lacks or that is not open. */
  outbox(tenantId: string): TenantOutbox {
    const entry = this.entries.get(tenantId);
    if (!entry) throw new OutboxWriteError(unknownTenant(tenantId, [...this.entries.keys()]));
    if (!entry.outbox) throw new OutboxWriteError(tenantNotOpen(tenantId, entry.error));
    return entry.outbox;
  }

  status(): TenantStatus[] {
    return [...this.entries.values()].map(({ tenant, outbox, error, failingSince }): TenantStatus => {
      if (!outbox) return error === undefined ? { id: tenant.id, state: 'opening' } : { id: tenant.id, state: 'failing', error, failingSince };
      const failure = outbox.relayFailure();
      return failure ? { id: tenant.id, state: 'open', error: failure.error, failingSince: failure.since } : { id: tenant.id, state: 'open' };
    });
  }

  /** Stops refreshing, every relay, and closes every pool. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.refreshing?.catch(() => undefined);
    await Promise.all([...this.entries.keys()].map((id) => this.close(id)));
  }

  private async applyList(): Promise<void> {
    let wanted: Map<string, { tenant: TenantDatabase; target: ConnectionTarget }>;
    try {
      wanted = checkTenantList(await this.config.list(), this.config.poolSize);
    } catch (error) {
      this.config.shared.logger.error(tenantListFailed(errorText(error)));
      return;
    }
    if (this.stopped) return;
    const closing = [...this.entries].filter(([id, entry]) => wanted.get(id)?.tenant.url !== entry.tenant.url).map(([id]) => this.close(id));
    await Promise.all(closing);
    const opening = [...wanted.values()].filter(({ tenant }) => !this.entries.get(tenant.id)?.outbox).map(({ tenant, target }) => this.open(tenant, target));
    await Promise.all(opening);
  }

  private async open(tenant: TenantDatabase, target: ConnectionTarget): Promise<void> {
    const entry: Entry = this.entries.get(tenant.id) ?? { tenant };
    this.entries.set(tenant.id, entry);
    try {
      const outbox = await TenantOutbox.open(tenant, target, this.config.shared);
      // Removed, or stopped, while it opened: close what was just opened.
      if (this.stopped || this.entries.get(tenant.id) !== entry) return void (await outbox.close(this.config.closeTimeoutMs));
      entry.outbox = outbox;
      entry.error = undefined;
      entry.failingSince = undefined;
      this.config.shared.logger.log(`Outbox of tenant "${tenant.id}" open: relaying "${this.config.shared.table.tableName}".`);
    } catch (error) {
      entry.error = errorText(error);
      entry.failingSince ??= new Date();
      this.config.shared.logger.warn(tenantOpenFailed(tenant.id, entry.error));
    }
  }

  private async close(id: string): Promise<void> {
    const entry = this.entries.get(id);
    this.entries.delete(id);
    if (!entry?.outbox) return;
    try {
      await entry.outbox.close(this.config.closeTimeoutMs);
      this.config.shared.logger.log(`Outbox of tenant "${id}" closed: relay stopped, connections closed.`);
    } catch (error) {
      this.config.shared.logger.warn(`Closing the outbox of tenant "${id}" failed: ${errorText(error)}`);
    }
  }
}
