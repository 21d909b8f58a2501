// @nest-outbox/outbox/tenants: outboxes for tenant databases that come and go while the app runs.
export { OutboxTenantsModule } from '../nest/tenants/outbox-tenants.module';
export { OutboxTenants } from '../nest/tenants/outbox-tenants';
export type { OutboxTenantsModuleOptions, TenantRelaySettings } from '../nest/tenants/outbox-tenants.options';
export type { TenantDatabase } from '../adapters/tenants/tenant-database';
export type { TenantStatus } from '../adapters/tenants/tenant-outboxes';
