import { Inject, Injectable, Logger, NotFoundException, Optional, Scope, ServiceUnavailableException, type OnApplicationBootstrap, type OnModuleInit, type Provider } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { TENANT_ID } from '../../adapters/tenants/tenant-database';
import type { TenantStatus } from '../../adapters/tenants/tenant-outboxes';
import { errorText } from '../../core/error-text';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { OutboxTenants } from '../../nest/tenants/outbox-tenants';
import { CONSOLE_TARGET, type ConsoleTarget, type ConsoleTargetRef } from '../console-target';
import { OUTBOX_CONSOLE_OPTIONS } from '../outbox-console.constants';
import { consoleMounted, consoleWithoutAuth } from '../outbox-console.messages';
import type { ResolvedConsoleOptions } from '../outbox-console.options';
import { consoleNeedsTenantsModule, consoleTenantNotOpen, consoleUnknownTenant } from './tenant-console.messages';

/** A tenant as the console's list shows it: `status()`'s entry, with its table's counts while it is open. */
export interface TenantConsoleEntry extends TenantStatus {
  counts?: { pending: number; inFlight: number; retrying: number; dead: number; oldestPendingAgeMs: number | null };
  /** Why the counts could not be read (the tenant's database failing). */
  countsError?: string;
}

/** The tenant outboxes as a console mount over them sees them (`OutboxConsoleModule.forRoot({ tenants: true })`). */
@Injectable()
export class TenantConsoles implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger('OutboxConsole');

  constructor(
    @Optional() @Inject(OutboxTenants) private readonly tenants: OutboxTenants | undefined,
    @Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
  ) {}

  onModuleInit(): void {
    if (!this.tenants) throw new OutboxConfigurationError(consoleNeedsTenantsModule(this.options.path));
  }

  onApplicationBootstrap(): void {
    // The mount's own line, as OutboxConsoleService logs it for a console over one outbox.
    if (this.options.noAuth) this.logger.warn(consoleWithoutAuth(this.options.path));
    else this.logger.log(consoleMounted(this.options.path, this.options.readOnly));
  }

  /** Every tenant of the last list, with its state and, while open, its counts (the shared cached stats). */
  list(): Promise<TenantConsoleEntry[]> {
    const tenants = this.tenants!;
    return Promise.all(tenants.status().map(async (status): Promise<TenantConsoleEntry> => {
      if (status.state !== 'open') return status;
      try {
        const { pending, inFlight, retrying, dead, oldestPendingAgeMs } = await tenants.stats(status.id);
        return { ...status, counts: { pending, inFlight, retrying, dead, oldestPendingAgeMs } };
      } catch (error) {
        return { ...status, countsError: errorText(error) };
      }
    }));
  }

  /** The console's target for the tenant a request names: 404 for one the list lacks (or a malformed id), 503 for one not open. */
  target(tenantId: unknown): ConsoleTarget {
    const tenants = this.tenants!;
    const status = typeof tenantId === 'string' && TENANT_ID.test(tenantId) ? tenants.status().find((tenant) => tenant.id === tenantId) : undefined;
    if (!status) throw new NotFoundException(consoleUnknownTenant(String(tenantId).slice(0, 80)));
    if (status.state !== 'open') throw new ServiceUnavailableException(consoleTenantNotOpen(status.id, status.error));
    const id = status.id;
    return {
      ...tenants.console(id),
      stats: (options) => tenants.stats(id, options),
      wakeRelay: () => tenants.wake(id),
      heading: `tenant ${id}`,
    };
  }
}

/**
 * A mount over tenant outboxes serves `<path>/<tenant>/…`: each request's target is the tenant of
 * its URL, found when the handler first uses it, so after the guard has run.
 */
export const tenantConsoleTarget: Provider = {
  provide: CONSOLE_TARGET,
  scope: Scope.REQUEST,
  inject: [REQUEST, TenantConsoles],
  useFactory: (request: { params?: Record<string, string> }, consoles: TenantConsoles): ConsoleTargetRef => {
    let target: ConsoleTarget | undefined;
    return () => (target ??= consoles.target(request.params?.tenant));
  },
};
