/** A tenant as `OutboxTenants.status()` reports it (the fields judged here). */
export interface JudgedTenant {
  id: string;
  state: 'open' | 'opening' | 'failing';
  error?: string;
  failingSince?: Date;
}

export interface TenantsHealthVerdict {
  healthy: boolean;
  /** One sentence per tenant failing for longer than allowed; empty when healthy. */
  reasons: string[];
  details: {
    open: number;
    /** Every tenant with a failure now, however recent: the one that could not be opened, or whose relay's rounds fail. */
    failing: Array<{ id: string; state: JudgedTenant['state']; error: string; failingForSeconds: number }>;
  };
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/**
 * Down when a tenant has been failing for longer than `maxFailingMs`: it could not be opened, or its
 * relay has not completed a round since (a server gone, a statement past `queryTimeoutMs`). Shorter
 * failures show in the details only, so that a restart of one database does not flap the check.
 * A tenant still opening for the first time has no failure yet. Plain code, unit-tested.
 */
export function judgeTenants(tenants: readonly JudgedTenant[], maxFailingMs: number, now: number): TenantsHealthVerdict {
  const failing = tenants.flatMap((tenant) =>
    tenant.error !== undefined && tenant.failingSince ? [{ id: tenant.id, state: tenant.state, error: tenant.error, failingForMs: now - tenant.failingSince.getTime() }] : [],
  );
  const reasons = failing
    .filter((tenant) => tenant.failingForMs > maxFailingMs)
    .map(
      (tenant) =>
        `tenant "${tenant.id}" ${tenant.state === 'open' ? 'has had its relay failing' : 'could not be opened'} for ${seconds(tenant.failingForMs)} s ` +
        `(over maxFailingMs, ${seconds(maxFailingMs)} s): ${tenant.error}`,
    );
  return {
    healthy: reasons.length === 0,
    reasons,
    details: {
      open: tenants.filter((tenant) => tenant.state === 'open').length,
      failing: failing.map(({ failingForMs, ...tenant }) => ({ ...tenant, failingForSeconds: seconds(failingForMs) })),
    },
  };
}
