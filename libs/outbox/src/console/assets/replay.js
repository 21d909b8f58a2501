// The console's "Replay" actions: published messages sent again, with their ids, to their
// destinations, in their original order. Kept apart from console.js, which it reaches only
// through the page: the dialog's fields, the applied filter (#filters' data-applied) and Refresh.
'use strict';
(() => {
  const $ = (selector) => document.querySelector(selector);

  async function post(path, body) {
    const response = await fetch(`api/${path}`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = response.headers.get('content-type')?.includes('json') ? await response.json() : await response.text();
    if (!response.ok) {
      const message = Array.isArray(answer?.message) ? answer.message.join('; ') : answer?.message ?? String(answer);
      throw new Error(`${response.status}: ${message}`);
    }
    return answer;
  }

  function say(where, text) {
    const element = $(where);
    element.textContent = text ?? '';
    element.hidden = !text;
  }

  // The reason is required: it goes onto every replayed message and to its consumers.
  function askReason(what) {
    const reason = prompt(`Why replay ${what}? (required: stored on the messages and sent to consumers as "outbox-replay-reason")`);
    if (reason === null) return null;
    if (reason.trim() === '') {
      alert('A replay needs a reason.');
      return null;
    }
    return reason.trim();
  }

  function outcomeText(outcome) {
    const waiting = outcome.waiting > 0 ? `; ${outcome.waiting} wait behind a newer message in flight` : '';
    return `${outcome.replayed} message(s) replayed${waiting}${outcome.note ? `. ${outcome.note}` : ''}`;
  }

  // The id and status the dialog shows (console.js fills its fields).
  function shownMessage() {
    const fields = {};
    const terms = document.querySelectorAll('#detail-fields dt');
    for (const dt of terms) fields[dt.textContent] = dt.nextElementSibling?.textContent;
    return { id: fields.id, status: fields.status };
  }

  async function replayOne() {
    const { id } = shownMessage();
    const reason = id && askReason(`message ${id}`);
    if (!reason) return;
    say('#detail-error', null);
    try {
      const outcome = await post(`messages/${encodeURIComponent(id)}/replay`, { reason });
      $('#detail').close();
      say('#replay-status', outcomeText(outcome));
      $('#refresh').click();
    } catch (error) {
      say('#detail-error', String(error.message ?? error));
    }
  }

  async function replayMatching() {
    say('#error', null);
    say('#replay-status', null);
    let filter = {};
    try {
      filter = JSON.parse($('#filters').dataset.applied || '{}');
    } catch {
      filter = {};
    }
    const { retrying: _retrying, ...replayFilter } = filter;
    if (replayFilter.status === 'published') delete replayFilter.status;
    if (filter.retrying || (replayFilter.status && replayFilter.status !== 'published')) {
      return say('#error', 'A replay takes published messages: set the status filter to "published" or "any status".');
    }
    const all = Object.keys(replayFilter).length === 0;
    try {
      const reason = askReason(all ? 'every published message the table keeps' : 'the published messages matching the filter');
      if (!reason) return;
      const dry = await post('bulk/replay', { ...replayFilter, reason, dryRun: true, all: all || undefined });
      if (dry.matched === 0) return say('#error', `No published message matches the filter.${dry.note ? ` ${dry.note}` : ''}`);
      const scope = all ? 'EVERY published message the table keeps (no filter)' : 'published message(s) matching the filter';
      if (!confirm(`Replay ${dry.matched} ${scope}, with their ids, to their destinations, in their original order?`)) return;
      const done = await post('bulk/replay', { ...replayFilter, reason, dryRun: false, all: all || undefined });
      say('#replay-status', outcomeText(done));
    } catch (error) {
      say('#error', String(error.message ?? error));
    }
    $('#refresh').click();
  }

  document.addEventListener('DOMContentLoaded', () => {
    const one = Object.assign(document.createElement('button'), { type: 'button', id: 'detail-replay', textContent: 'Replay…', disabled: true });
    $('#detail .action.buttons').prepend(one);
    one.addEventListener('click', replayOne);
    // Enabled for published messages only, each time the dialog shows one.
    new MutationObserver(() => (one.disabled = shownMessage().status !== 'published')).observe($('#detail-fields'), { childList: true });

    const bulk = Object.assign(document.createElement('button'), { type: 'button', id: 'bulk-replay', textContent: 'Replay all…' });
    $('#bulk').append(' · published: ', bulk);
    bulk.addEventListener('click', replayMatching);
    // The outcome stays until the next replay: a refresh rewrites #updated, not this.
    const status = Object.assign(document.createElement('p'), { id: 'replay-status', className: 'muted', hidden: true });
    status.setAttribute('role', 'status');
    $('#bulk').after(status);
  });
})();
