// @nest-outbox/outbox/tenants: several outboxes beyond @InjectOutbox (docs/several-outboxes.md): outboxes
// for tenant databases that come and go while the app runs, a publisher over shards, tokens by name.
export { getOutboxToken } from '../nest/named/outbox-tokens';
export { ShardedOutboxPublisher } from '../nest/named/sharded-outbox.publisher';
export { OutboxTenantsModule } from '../nest/tenants/outbox-tenants.module';
export { OutboxTenants } from '../nest/tenants/outbox-tenants';
export type { OutboxTenantsModuleOptions, TenantRelaySettings } from '../nest/tenants/outbox-tenants.options';
export type { TenantDatabase } from '../adapters/tenants/tenant-database';
export type { TenantStatus } from '../adapters/tenants/tenant-outboxes';
