import type { TenantConsoleEntry } from './tenant-consoles';

const escape = (text: string) => text.replace(/[&"'<>]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The tenant list: one row per tenant with its state and counts, linking to its console. Rendered on
 * the server, without script: it reloads itself every `refreshMs` (0 = never).
 */
export function tenantListHtml(baseUrl: string, tenants: TenantConsoleEntry[], refreshMs: number): string {
  const rows = tenants.map((tenant) => {
    const counts = tenant.counts;
    const cell = (value: number | undefined) => `<td class="num">${value ?? '–'}</td>`;
    const lag = counts?.oldestPendingAgeMs == null ? '–' : `${(counts.oldestPendingAgeMs / 1000).toFixed(1)} s`;
    const problem = tenant.error ?? tenant.countsError;
    const name = tenant.state === 'open' ? `<a href="${escape(encodeURIComponent(tenant.id))}/">${escape(tenant.id)}</a>` : escape(tenant.id);
    return (
      `<tr data-tenant="${escape(tenant.id)}"><td>${name}</td><td>${tenant.state}${problem ? ' (failing)' : ''}</td>` +
      `${cell(counts?.pending)}${cell(counts?.inFlight)}${cell(counts?.retrying)}${cell(counts?.dead)}<td class="num">${lag}</td>` +
      `<td class="error">${problem ? escape(problem) : ''}${tenant.failingSince ? ` <span class="muted">since ${tenant.failingSince.toISOString()}</span>` : ''}</td></tr>`
    );
  });
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  ${refreshMs > 0 ? `<meta http-equiv="refresh" content="${Math.round(refreshMs / 1000)}">` : ''}
  <base href="${escape(baseUrl)}">
  <title>Outbox console · tenants</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="assets/console.css">
</head>
<body>
  <header><h1>Outbox · tenants</h1><span class="muted">${tenants.length} tenant(s); open one for its messages, requeue, discard, pause and replay</span></header>
  <main>
    <section class="panel">
      <table id="tenants">
        <thead><tr><th>Tenant</th><th>State</th><th>Pending</th><th>In flight</th><th>Retrying</th><th>Dead</th><th>Lag</th><th>Error</th></tr></thead>
        <tbody>${rows.join('\n')}</tbody>
      </table>
    </section>
  </main>
</body>
</html>
`;
}
