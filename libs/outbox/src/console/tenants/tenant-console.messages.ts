// Messages of the console over tenant outboxes (OutboxConsoleModule.forRoot({ tenants: true })).

export const consoleNeedsTenantsModule = (path: string) =>
  `OutboxConsoleModule.forRoot({ tenants: true }) at "${path}" shows the outboxes of OutboxTenantsModule, which this app does not import: ` +
  `import OutboxTenantsModule.forRoot({ tenants, transport }) (it is global by default), or leave "tenants" out for a console over an OutboxModule.`;

export const consoleUnknownTenant = (id: string) =>
  `No tenant "${id}" in the list OutboxTenantsModule's "tenants" returned last; the console's tenant list (one level up) shows those there are.`;

export const consoleTenantNotOpen = (id: string, reason: string | undefined) =>
  `The outbox of tenant "${id}" is not open${reason ? ` (${reason})` : ' yet'}: its rows cannot be read now. It is tried again at the next refresh; the tenant list shows its state.`;

export const consoleTenantsWithOutbox = () =>
  `OutboxConsoleModule: "tenants" and "outbox" are exclusive: a console mount shows either one OutboxModule's outbox ("outbox") or the tenant outboxes ("tenants: true"). Mount one console for each.`;
