// The console's "Poison messages" section: deliveries the inbox set aside. Plain DOM code, built
// here so that the rest of the page does not need to know about it; hidden when the app has no inbox.
'use strict';
(() => {
  // The page's own setting (the console's refreshIntervalMs; 0 = off), and its auto-refresh box.
  const refreshMs = Number(document.body.dataset.refreshMs) || 0;

  async function api(path, init) {
    const response = await fetch(`api/${path}`, { credentials: 'same-origin', ...init });
    const body = response.headers.get('content-type')?.includes('json') ? await response.json() : await response.text();
    if (!response.ok) {
      const message = Array.isArray(body?.message) ? body.message.join('; ') : body?.message ?? String(body);
      throw new Error(`${response.status}: ${message}`);
    }
    return body;
  }

  const recordPath = (record) => `poison/${encodeURIComponent(record.consumer)}/${encodeURIComponent(record.key)}`;
  const post = (path) => api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });

  function element(tag, properties = {}, children = []) {
    const node = Object.assign(document.createElement(tag), properties);
    node.append(...children);
    return node;
  }

  const section = element('section', { className: 'panel', id: 'poison', hidden: true });
  const count = element('span', { className: 'muted', id: 'poison-count' });
  const error = element('p', { className: 'error', id: 'poison-error', role: 'alert', hidden: true });
  const status = element('p', { className: 'muted', id: 'poison-status' });
  const table = element('table', { id: 'poison-records' });
  table.createTHead().insertRow().append(
    ...['Consumer', 'Message id', 'State', 'Attempts', 'First failure', 'Last failure', 'Reason', 'Message', ''].map((text) => element('th', { textContent: text })),
  );
  const body = table.createTBody();
  section.append(element('h2', {}, ['Poison messages (inbox) ', count]), status, error, table);

  function showError(failure) {
    error.textContent = failure ? String(failure.message ?? failure) : '';
    error.hidden = !failure;
  }

  function cell(row, text, className) {
    const td = row.insertCell();
    td.textContent = text;
    if (className) td.className = className;
    return td;
  }

  async function act(button, action, done) {
    button.disabled = true;
    showError(null);
    try {
      await action();
      status.textContent = done;
      await load();
    } catch (failure) {
      showError(failure);
    } finally {
      button.disabled = false;
    }
  }

  function draw(page) {
    section.hidden = !page.enabled;
    count.textContent = `(${page.records.length})`;
    body.replaceChildren();
    for (const record of page.records) {
      const row = body.insertRow();
      row.dataset.key = record.key;
      cell(row, record.consumer);
      cell(row, record.messageId ?? '– (undecodable)');
      cell(row, record.state);
      cell(row, String(record.attempts));
      cell(row, new Date(record.firstFailedAt).toLocaleString());
      cell(row, new Date(record.lastFailedAt).toLocaleString());
      cell(row, record.reason, 'error-text');
      cell(row, record.raw.length > 120 ? `${record.raw.slice(0, 120)}…` : record.raw, 'mono');
      const actions = row.insertCell();
      const replayable = record.messageId !== null && !record.truncated && page.replayable.includes(record.consumer);
      const replay = element('button', { type: 'button', textContent: 'Replay', className: 'poison-replay', disabled: !replayable });
      if (!replayable) replay.title = record.messageId === null ? 'Could not be decoded: nothing to replay' : record.truncated ? 'Stored cut short' : 'Its handler does not run in this app';
      replay.addEventListener('click', () => act(replay, () => post(`${recordPath(record)}/replay`), `Replayed ${record.consumer} / ${record.key}.`));
      const remove = element('button', { type: 'button', textContent: 'Delete', className: 'danger poison-delete' });
      remove.addEventListener('click', () => {
        if (!confirm(`Delete the record of ${record.consumer} / ${record.key}? The message will not be handled.`)) return;
        act(remove, () => post(`${recordPath(record)}/delete`), `Deleted ${record.consumer} / ${record.key}.`);
      });
      actions.append(replay, ' ', remove);
    }
  }

  async function load() {
    try {
      draw(await api('poison?limit=200'));
      if (error.textContent.startsWith('Poison records')) showError(null);
    } catch (failure) {
      showError(new Error(`Poison records could not be loaded: ${failure.message}`));
    }
  }

  document.addEventListener('DOMContentLoaded', () => {
    document.querySelector('main').append(section);
    document.querySelector('#refresh')?.addEventListener('click', () => void load());
    void load();
    if (refreshMs > 0) {
      setInterval(() => {
        if (document.querySelector('#auto-refresh')?.checked !== false && !document.hidden) void load();
      }, refreshMs);
    }
  });
})();
