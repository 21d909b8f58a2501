import { Module, type DynamicModule } from '@nestjs/common';
import { defaultRelayId } from '../outbox-relay.host';
import { resolveTenantsOptions } from './outbox-tenants.checks';
import { OUTBOX_TENANTS_OPTIONS, type OutboxTenantsModuleOptions } from './outbox-tenants.options';
import { OutboxTenants } from './outbox-tenants';
import { OutboxTenantsHealthIndicator } from './outbox-tenants.health-indicator';

/**
 * Outboxes for a set of tenant databases that changes while the app runs:
 * `OutboxTenantsModule.forRoot({ tenants: () => tenantRegistry.databases(), transport: 'KAFKA' })`.
 */
@Module({})
export class OutboxTenantsModule {
  static forRoot(options: OutboxTenantsModuleOptions): DynamicModule {
    // Checked where it is declared: a bad option fails before any module connects.
    resolveTenantsOptions(options, defaultRelayId);
    return {
      module: OutboxTenantsModule,
      global: options.isGlobal ?? true,
      providers: [{ provide: OUTBOX_TENANTS_OPTIONS, useValue: options }, OutboxTenants, OutboxTenantsHealthIndicator],
      exports: [OutboxTenants, OutboxTenantsHealthIndicator],
    };
  }
}
