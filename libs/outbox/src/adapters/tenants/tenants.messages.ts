// Messages of the outboxes of tenant databases (OutboxTenantsModule).

export const invalidTenant = (index: number, problem: string) =>
  `OutboxTenantsModule: the tenant at index ${index} of the list that "tenants" returned is refused: ${problem}. ` +
  `Each tenant is { id, url }: an id of letters, digits, _, - or . (at most 64), and a postgres://, mysql:// or sqlite: url.`;

export const duplicateTenant = (id: string) =>
  `OutboxTenantsModule: "tenants" returned the tenant "${id}" twice. Each id names one database.`;

export const tenantListFailed = (reason: string) =>
  `OutboxTenantsModule: the "tenants" function failed (${reason}); the tenants already open keep publishing, and the list is read again at the next refresh.`;

export const tenantOpenFailed = (id: string, reason: string) =>
  `Outbox of tenant "${id}" could not be opened (${reason}); its events wait in its table, and opening is tried again at the next refresh. The other tenants are not held back.`;

export const tenantStatementTimedOut = (id: string, ms: number) =>
  `Tenant "${id}": a statement on its database exceeded queryTimeoutMs (${ms} ms) without an answer (a hung server, or a network path that drops packets); ` +
  `it was abandoned and its connection closed, so the tenant holds no relay turn longer. Its events wait in its table; check that database, or raise queryTimeoutMs if its statements are only slow.`;

export const unknownTenant = (id: string, known: readonly string[]) =>
  `There is no outbox for the tenant "${id}": the last list "tenants" returned ${known.length === 0 ? 'was empty' : `has ${known.map((k) => `"${k}"`).join(', ')}`}. ` +
  `Add the tenant to what "tenants" returns (it is read again every refreshIntervalMs, or call OutboxTenants.refresh()). Nothing was written.`;

export const tenantNotOpen = (id: string, reason: string | undefined) =>
  `The outbox of the tenant "${id}" is not open${reason ? ` (${reason})` : ' yet'}: nothing was written, and your transaction should roll back. It is tried again at the next refresh.`;

export const tenantsRefuseWal = () =>
  `OutboxTenantsModule does not run the WAL mode ("delivery": 'wal'): tenant outboxes are relayed from their tables. Leave "delivery" out, or declare a named OutboxModule per database for the WAL mode.`;

export const tenantRelayStillFailing = (repeats: number, since: Date, text: string) =>
  `the relay still fails: ${repeats} more time(s) as above since the last line, failing since ${since.toISOString()} (${text}). Its events wait in its table; status() and the health indicator show it.`;

export const tenantRelayRecovered = (seconds: number, failures: number) =>
  `the relay completes its rounds again, after ${seconds.toFixed(1)} s and ${failures} failure(s).`;
