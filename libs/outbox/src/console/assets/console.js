// The outbox console page: plain DOM code, no framework, nothing loaded from elsewhere.
'use strict';
(() => {
  const $ = (selector) => document.querySelector(selector);
  const state = { filter: {}, next: null, current: null, readOnly: false };

  async function api(path, init) {
    const response = await fetch(`api/${path}`, { credentials: 'same-origin', ...init });
    const body = response.headers.get('content-type')?.includes('json') ? await response.json() : await response.text();
    if (!response.ok) {
      const message = Array.isArray(body?.message) ? body.message.join('; ') : body?.message ?? String(body);
      throw new Error(`${response.status}: ${message}`);
    }
    return body;
  }

  const post = (path, body) => api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body ?? {}) });

  function showError(error) {
    const element = $('#error');
    element.textContent = error ? String(error.message ?? error) : '';
    element.hidden = !error;
  }

  function duration(ms) {
    if (ms === null || ms === undefined) return '–';
    if (ms < 1000) return `${Math.round(ms)} ms`;
    if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
    if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
    return `${(ms / 3_600_000).toFixed(1)} h`;
  }

  const time = (iso) => (iso ? new Date(iso).toLocaleString() : '–');

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
    document.body.classList.toggle('read-only', summary.readOnly);
    $('#read-only').hidden = !summary.readOnly;
    const { stats } = summary;
    for (const element of document.querySelectorAll('#counts [data-count]')) {
      const key = element.dataset.count;
      element.textContent = key === 'lag' ? duration(stats.oldestPendingAgeMs) : String(stats[key]);
    }
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
      item.textContent = `${p.destination} (since ${time(p.pausedAt)}) `;
      const resume = document.createElement('button');
      resume.type = 'button';
      resume.className = 'action';
      resume.textContent = 'Resume';
      resume.addEventListener('click', () => act(() => post('destinations/resume', { destination: p.destination })));
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

  async function loadMessages(append) {
    const page = await api(`messages?${query({ limit: 50, before: append ? state.next : undefined })}`);
    const body = $('#messages tbody');
    if (!append) body.replaceChildren();
    for (const m of page.messages) {
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
      cell(row, m.lastError ?? '', 'error-cell');
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
    if (!$('#detail').open) $('#detail').showModal();
  }

  async function act(action) {
    showError(null);
    try {
      await action();
    } catch (error) {
      showError(error);
    }
    await refresh();
  }

  async function bulk(kind) {
    showError(null);
    try {
      const { status: _status, ...filter } = state.filter;
      const dry = await post(`bulk/${kind}`, { ...filter, dryRun: true });
      if (dry.matched === 0) return showError(new Error('No dead message matches the filter.'));
      if (!confirm(`${kind === 'requeue' ? 'Requeue' : 'Discard'} ${dry.matched} dead message(s) matching the filter?`)) return;
      const done = await post(`bulk/${kind}`, { ...filter, dryRun: false });
      $('#updated').textContent = `${done.changed} message(s) ${kind === 'requeue' ? 'requeued' : 'discarded'}`;
    } catch (error) {
      showError(error);
    }
    await refresh();
  }

  async function refresh() {
    try {
      await Promise.all([loadSummary(true), loadMessages(false)]);
    } catch (error) {
      showError(error);
    }
  }

  function readFilters() {
    const data = new FormData($('#filters'));
    const filter = {};
    for (const [key, value] of data.entries()) {
      if (value === '') continue;
      filter[key] = key === 'from' || key === 'to' ? new Date(String(value)).toISOString() : String(value);
    }
    state.filter = filter;
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('#filters').addEventListener('submit', (event) => {
      event.preventDefault();
      readFilters();
      showError(null);
      loadMessages(false).catch(showError);
    });
    $('#filters').addEventListener('reset', () => setTimeout(() => { readFilters(); loadMessages(false).catch(showError); }));
    $('#refresh').addEventListener('click', refresh);
    $('#more').addEventListener('click', () => loadMessages(true).catch(showError));
    $('#bulk-requeue').addEventListener('click', () => bulk('requeue'));
    $('#bulk-discard').addEventListener('click', () => bulk('discard'));
    $('#detail-close').addEventListener('click', () => $('#detail').close());
    $('#detail-requeue').addEventListener('click', () => {
      const m = state.current;
      if (m && confirm(`Requeue message ${m.id}?`)) act(() => post(`messages/${m.id}/requeue`).then(() => $('#detail').close()));
    });
    $('#detail-discard').addEventListener('click', () => {
      const m = state.current;
      if (m && confirm(`Discard message ${m.id} for good?`)) act(() => post(`messages/${m.id}/discard`).then(() => $('#detail').close()));
    });
    $('#pause-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const destination = String(new FormData(event.target).get('destination'));
      if (confirm(`Pause publishing to "${destination}" on every relay?`)) act(() => post('destinations/pause', { destination }));
    });
    refresh();
    setInterval(() => loadSummary(false).catch(showError), 10_000);
  });
})();
