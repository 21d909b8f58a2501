import { resolveConnectionOption, type ConnectionTarget } from '../connection/outbox-connection.options';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { errorText } from '../../core/error-text';
import { duplicateTenant, invalidTenant } from './tenants.messages';

/** One tenant's database, as the app's `tenants` function lists it. */
export interface TenantDatabase {
  /** Names the tenant in `OutboxTenants.add(id, …)`, logs and status. Letters, digits, `_`, `-`, `.`; at most 64. */
  id: string;
  /** Its database: `postgres://…`, `mysql://…` or `sqlite:<path>`, holding the outbox table. */
  url: string;
}

export const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The list checked whole before anything changes: a bad entry fails the refresh, naming it, and the tenants open stay as they are. */
export function checkTenantList(list: unknown, poolSize: number): Map<string, { tenant: TenantDatabase; target: ConnectionTarget }> {
  if (!Array.isArray(list)) throw new OutboxConfigurationError(invalidTenant(-1, `the function returned ${list === null ? 'null' : typeof list}, not an array`));
  const checked = new Map<string, { tenant: TenantDatabase; target: ConnectionTarget }>();
  list.forEach((entry: unknown, index) => {
    const { id, url } = (entry ?? {}) as Partial<TenantDatabase>;
    if (typeof id !== 'string' || !TENANT_ID.test(id)) throw new OutboxConfigurationError(invalidTenant(index, `id ${JSON.stringify(id)}`));
    if (checked.has(id)) throw new OutboxConfigurationError(duplicateTenant(id));
    let target: ConnectionTarget;
    try {
      target = resolveConnectionOption({ url, poolSize });
    } catch (error) {
      throw new OutboxConfigurationError(invalidTenant(index, `tenant "${id}": ${errorText(error)}`));
    }
    checked.set(id, { tenant: { id, url: url as string }, target });
  });
  return checked;
}
