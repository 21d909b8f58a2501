// The outbox console page: plain DOM code, no framework, nothing loaded from elsewhere.
'use strict';
(() => {
  const $ = (selector) => document.querySelector(selector);
  const state = { filter: {}, next: null, current: null, readOnly: false, pageSize: 50 };
  // How often the page refreshes itself and retries a lost connection (the console's refreshIntervalMs; 0 = off).
  const refreshMs = Number(document.body.dataset.refreshMs) || 0;

  // Every request goes through here: a network failure ("Failed to fetch": the app is down or
  // restarting) shows in the header until a request gets through again, which clears it, so the
  // page recovers by itself. An HTTP error carries the field at fault, for the place that asked.
  async function api(path, init) {
    let response;
    try {
      response = await fetch(`api/${path}`, { credentials: 'same-origin', ...init });
    } catch (error) {
      connection(`Cannot reach the app (${error.message})${refreshMs > 0 ? `; trying again every ${refreshMs / 1000} s` : '; press Refresh to try again'}.`);
      throw Object.assign(new Error(`Cannot reach the app (${error.message}).`), { offline: true });
    }
    connection(null);
    const body = response.headers.get('content-type')?.includes('json') ? await response.json() : await response.text();
    if (!response.ok) {
      const message = Array.isArray(body?.message) ? body.message.join('; ') : body?.message ?? String(body);
      throw Object.assign(new Error(`${response.status}: ${message}`), { status: response.status, field: body?.field, detail: message });
    }
    return body;
  }

  function connection(text) {
    const element = $('#connection');
    element.textContent = text ?? '';
    element.hidden = !text;
  }

  const post = (path, body) => api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body ?? {}) });

  /** Shows an error where its action was taken: `#error` by the table, `#pause-error`, `#detail-error` inside the dialog. */
  function showError(error, where = '#error') {
    const element = $(where);
    // A lost connection is already said in the header, and cleared there when it comes back.
    const text = error && !error.offline ? String(error.message ?? error) : '';
    element.textContent = text;
    element.hidden = !text;
  }

  function duration(ms) {
    if (ms === null || ms === undefined) return '–';
    if (ms < 1000) return `${Math.round(ms)} ms`;
    if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
    if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
    return `${(ms / 3_600_000).toFixed(1)} h`;
  }

  const time = (iso) => (iso ? new Date(iso).toLocaleString() : '–');

  const bytes = (n) => (n < 1024 ? `${n} B` : n < 1_048_576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1_048_576).toFixed(1)} MiB`);

  // The WAL mode's slot in the header (absent in the table mode): what it retains, how late the stream confirms.
  function showWal(wal) {
    const line = $('#wal');
    line.hidden = !wal;
    if (!wal) return;
    const lag = wal.lagSeconds === null ? '–' : duration(wal.lagSeconds * 1000);
    line.textContent = wal.retainedBytes === null ? `WAL slot ${wal.slot}: missing` : `WAL slot ${wal.slot}: ${bytes(wal.retainedBytes)} retained, lag ${lag}, ${wal.active ? 'streamed' : 'not streamed'}`;
    line.classList.toggle('error', wal.retainedBytes === null || !wal.active);
    line.classList.toggle('muted', wal.retainedBytes !== null && wal.active);
  }

  function cell(row, text, className) {
    const td = row.insertCell();
    td.textContent = text;
    if (className) td.className = className;
    return td;
  }

  function drawThroughput(points) {
    const svg = $('#throughput');
    svg.replaceChildren();
    const ns = 'http://www.w3.org/2000/svg';
    const now = Date.now();
    const byMinute = new Map(points.map((p) => [Math.floor(new Date(p.minute).getTime() / 60_000), p.published]));
    const last = Math.floor(now / 60_000);
    const values = Array.from({ length: 60 }, (_, i) => byMinute.get(last - 59 + i) ?? 0);
    const max = Math.max(1, ...values);
    values.forEach((value, i) => {
      const height = (value / max) * 100;
      const rect = document.createElementNS(ns, 'rect');
      rect.setAttribute('x', String(i * 10 + 1));
      rect.setAttribute('width', '8');
      rect.setAttribute('y', String(110 - height));
      rect.setAttribute('height', String(height));
      const title = document.createElementNS(ns, 'title');
      title.textContent = `${value} published`;
      rect.append(title);
      svg.append(rect);
    });
    // Outside the SVG: the chart stretches to the panel's width, text would stretch with it.
    $('#throughput-max').textContent = `peak ${max}/min`;
    svg.dataset.total = String(values.reduce((a, b) => a + b, 0));
  }

  // Fresh figures when the operator asks or acted; the periodic poll shares the server's cached stats.
  async function loadSummary(fresh) {
    const summary = await api(fresh ? 'summary?fresh=true' : 'summary');
    state.readOnly = summary.readOnly;
    state.maxPageSize = summary.maxPageSize ?? 200;
    state.pageSize = Math.min(50, state.maxPageSize);
    document.body.classList.toggle('read-only', summary.readOnly);
    $('#read-only').hidden = !summary.readOnly;
    const { stats } = summary;
    for (const element of document.querySelectorAll('#counts [data-count]')) {
      const key = element.dataset.count;
      element.textContent = key === 'lag' ? duration(stats.oldestPendingAgeMs) : String(stats[key]);
    }
    showWal(stats.wal);
    const body = $('#destinations tbody');
    body.replaceChildren();
    for (const d of stats.destinations) {
      const row = body.insertRow();
      [d.transport, d.destination, d.pending, d.dead, d.publishedLastHour, duration(d.oldestPendingAgeMs)].forEach((v) => cell(row, String(v)));
    }
    drawThroughput(summary.throughput);
    const paused = $('#paused');
    paused.replaceChildren();
    for (const p of summary.paused) {
      const item = document.createElement('li');
      item.textContent = `${p.destination} (since ${time(p.pausedAt)}${p.reason ? `: ${p.reason}` : ''}) `;
      const resume = document.createElement('button');
      resume.type = 'button';
      resume.className = 'action';
      resume.textContent = 'Resume';
      resume.addEventListener('click', () => act(() => post('destinations/resume', { destination: p.destination }), '#pause-error'));
      item.append(resume);
      paused.append(item);
    }
    if (summary.paused.length === 0) paused.textContent = 'none';
    $('#updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
  }

  function query(extra) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries({ ...state.filter, ...extra })) if (value !== undefined && value !== '') params.set(key, value);
    return params.toString();
  }

  // Loads run one after another: a refresh that read the row count before a "More" click landed
  // would otherwise replace the table with fewer rows than the operator opened, or a "More" would
  // continue from a cursor the refresh is replacing.
  let messagesLoading = Promise.resolve();
  function loadMessages(append, keep = false) {
    const load = messagesLoading.then(() => readMessages(append, keep));
    messagesLoading = load.catch(() => undefined);
    return load;
  }

  // `keep`: a refresh reads as many rows as are shown, page after page (a page holds at most
  // maxPageSize), so the older pages the operator opened stay, and so does the scroll.
  async function readMessages(append, keep) {
    const body = $('#messages tbody');
    const wanted = keep ? Math.max(state.pageSize, body.rows.length) : state.pageSize;
    const messages = [];
    let before = append ? state.next : undefined;
    let page;
    do {
      const limit = Math.min(wanted - messages.length, state.maxPageSize ?? 200);
      page = await api(`messages?${query({ limit, before })}`);
      messages.push(...page.messages);
      before = page.next;
    } while (before && messages.length < wanted);
    if (!append) body.replaceChildren();
    for (const m of messages) {
      const row = body.insertRow();
      row.dataset.id = m.id;
      cell(row, m.position);
      const status = cell(row, '');
      const badge = document.createElement('span');
      badge.className = `status status-${m.status}`;
      badge.textContent = m.status;
      status.append(badge);
      cell(row, m.type);
      cell(row, `${m.aggregateType} ${m.aggregateId}`);
      cell(row, m.destination);
      cell(row, String(m.attempts));
      cell(row, time(m.createdAt));
      // A published row's last error is history: shown, but not in red.
      cell(row, m.lastError ?? '', m.status === 'published' ? 'error-cell past' : 'error-cell');
      row.addEventListener('click', () => openDetail(m.id).catch(showError));
    }
    state.next = page.next;
    $('#more').hidden = !page.next;
    $('#messages').dataset.rows = String(body.rows.length);
  }

  async function openDetail(id) {
    const m = await api(`messages/${encodeURIComponent(id)}`);
    state.current = m;
    $('#detail-title').textContent = `${m.type} · ${m.status}`;
    const fields = $('#detail-fields');
    fields.replaceChildren();
    const show = {
      id: m.id, position: m.position, status: m.status, version: m.version, aggregate: `${m.aggregateType} ${m.aggregateId}`,
      transport: m.transport, destination: m.destination, attempts: m.attempts, occurred: time(m.occurredAt), created: time(m.createdAt),
      published: time(m.publishedAt), dead: time(m.deadAt), 'next attempt': time(m.nextAttemptAt), correlation: m.correlationId ?? '–',
      causation: m.causationId ?? '–', tenant: m.tenantId ?? '–',
    };
    for (const [key, value] of Object.entries(show)) {
      const dt = document.createElement('dt');
      dt.textContent = key;
      const dd = document.createElement('dd');
      dd.textContent = String(value);
      fields.append(dt, dd);
    }
    const errors = $('#detail-errors');
    errors.replaceChildren();
    for (const e of m.errors) {
      const item = document.createElement('li');
      item.textContent = `${time(e.at)} — ${e.error}`;
      errors.append(item);
    }
    if (m.errors.length === 0) errors.textContent = 'none';
    $('#detail-headers').textContent = JSON.stringify(m.headers, null, 2);
    $('#detail-payload').textContent = JSON.stringify(m.payload, null, 2);
    $('#detail-requeue').disabled = m.status !== 'dead';
    $('#detail-discard').disabled = m.status !== 'dead';
    // "Retry now" is for a row waiting in backoff: pending, failed before, next attempt still ahead.
    $('#detail-retry-now').disabled = !(m.status === 'pending' && m.attempts > 0 && m.nextAttemptAt && Date.parse(m.nextAttemptAt) > Date.now());
    if (!$('#detail').open) {
      showError(null, '#detail-error');
      $('#detail').showModal();
    }
  }

  // An action of the dialog: on success the dialog closes; on failure the error shows inside it
  // (a modal dialog covers the page, so an error on the page would be hidden behind it) and its
  // fields are read again, since the row has changed under the operator.
  async function dialogAction(path) {
    const m = state.current;
    showError(null, '#detail-error');
    try {
      await post(path);
      $('#detail').close();
    } catch (error) {
      showError(error, '#detail-error');
      if (!error.offline) await openDetail(m.id).catch(() => undefined);
    }
    await refresh();
  }

  async function act(action, where = '#error') {
    showError(null, where);
    try {
      await action();
    } catch (error) {
      showError(error, where);
    }
    await refresh();
  }

  const BULK = {
    requeue: { ask: 'Requeue', rows: 'dead message(s)', done: 'requeued' },
    discard: { ask: 'Discard', rows: 'dead message(s)', done: 'discarded' },
    'retry-now': { ask: 'Retry now', rows: 'message(s) waiting in backoff', done: 'due now' },
  };

  async function bulk(kind) {
    const words = BULK[kind];
    showError(null);
    try {
      const { status: _status, retrying: _retrying, ...filter } = state.filter;
      const dry = await post(`bulk/${kind}`, { ...filter, dryRun: true });
      if (dry.matched === 0) return showError(new Error(`No ${words.rows.replace('(s)', '')} matches the filter.`));
      if (!confirm(`${words.ask} ${dry.matched} ${words.rows} matching the filter?`)) return;
      const done = await post(`bulk/${kind}`, { ...filter, dryRun: false });
      $('#updated').textContent = `${done.changed} message(s) ${words.done}`;
    } catch (error) {
      showError(error);
    }
    await refresh();
  }

  // A destination no row has used yet (often a typo) is refused by the server until confirmed.
  async function pause(form) {
    const data = new FormData(form);
    const destination = String(data.get('destination'));
    const body = { destination, reason: String(data.get('reason') ?? '') || undefined };
    showError(null, '#pause-error');
    if (!confirm(`Pause publishing to "${destination}" on every relay?`)) return;
    try {
      try {
        await post('destinations/pause', body);
      } catch (error) {
        if (error.field !== 'confirmUnknown') throw error;
        if (!confirm(`${error.detail}\n\nPause "${destination}" anyway?`)) return;
        await post('destinations/pause', { ...body, confirmUnknown: true });
      }
      form.reset();
    } catch (error) {
      showError(error, '#pause-error');
    }
    await refresh();
  }

  // `fresh`: read the stats now (after an action, or asked for); the periodic refresh shares the server's cached ones.
  async function refresh(fresh = true) {
    try {
      await Promise.all([loadSummary(fresh), loadMessages(false, true)]);
    } catch (error) {
      showError(error);
    }
  }

  // Refreshes itself every refreshMs while the page is visible and auto-refresh is on; a failed
  // refresh (the app down) is simply tried again at the next tick.
  function scheduleRefresh() {
    if (refreshMs <= 0) {
      $('#auto-refresh-label').hidden = true;
      return;
    }
    setTimeout(async () => {
      if ($('#auto-refresh').checked && !document.hidden) await refresh(false);
      scheduleRefresh();
    }, refreshMs);
  }

  function readFilters() {
    const data = new FormData($('#filters'));
    const filter = {};
    for (const [key, value] of data.entries()) {
      if (value === '') continue;
      if (key === 'status' && value === 'retrying') filter.retrying = 'true';
      else filter[key] = key === 'from' || key === 'to' ? new Date(String(value)).toISOString() : String(value);
    }
    state.filter = filter;
    $('#filters').dataset.applied = JSON.stringify(filter);
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('#filters').addEventListener('submit', (event) => {
      event.preventDefault();
      readFilters();
      showError(null);
      loadMessages(false).catch((error) => {
        // A refused filter: no rows of the previous one stay under its error as if they matched.
        $('#messages tbody').replaceChildren();
        $('#messages').dataset.rows = '0';
        $('#more').hidden = true;
        showError(error);
      });
    });
    $('#filters').addEventListener('reset', () => setTimeout(() => { readFilters(); loadMessages(false).catch(showError); }));
    $('#refresh').addEventListener('click', () => refresh());
    $('#more').addEventListener('click', () => loadMessages(true).catch(showError));
    $('#bulk-requeue').addEventListener('click', () => bulk('requeue'));
    $('#bulk-discard').addEventListener('click', () => bulk('discard'));
    $('#bulk-retry-now').addEventListener('click', () => bulk('retry-now'));
    $('#detail-close').addEventListener('click', () => $('#detail').close());
    $('#detail-requeue').addEventListener('click', () => {
      const m = state.current;
      if (m && confirm(`Requeue message ${m.id}?`)) dialogAction(`messages/${m.id}/requeue`);
    });
    $('#detail-discard').addEventListener('click', () => {
      const m = state.current;
      if (m && confirm(`Discard message ${m.id} for good?`)) dialogAction(`messages/${m.id}/discard`);
    });
    $('#detail-retry-now').addEventListener('click', () => {
      const m = state.current;
      if (m) dialogAction(`messages/${m.id}/retry-now`);
    });
    $('#pause-form').addEventListener('submit', (event) => {
      event.preventDefault();
      pause(event.target);
    });
    refresh();
    scheduleRefresh();
  });
})();
