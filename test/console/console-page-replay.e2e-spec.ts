import type { Dialog, Page } from 'playwright-core';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { launchChromium } from '../support/chromium';
import { createConsoleHarness, type ConsoleHarness } from '../support/console.harness';
import { RecordingTransport } from '../support/recording.transport';
import { waitFor } from '../support/wait-for';

/**
 * The console's Replay actions in Chromium (SQLite): one published message from its dialog, and
 * every published message of the applied filter after a confirm that shows the counted number,
 * each asking for the reason; the relay then sends them again with their ids, in order.
 */
describe('Outbox console page in Chromium: replay of published messages (SQLite)', () => {
  let h: ConsoleHarness;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  let transport: RecordingTransport;
  const dialogs: Array<{ type: string; message: string }> = [];
  let answers: Array<string | boolean> = [];

  beforeEach(async () => {
    h = await createConsoleHarness('sqlite', { noAuth: true, refreshIntervalMs: 0 });
    await h.app.listen(0, '127.0.0.1');
    browser = await launchChromium();
    page = await browser.context.newPage();
    transport = new RecordingTransport();
    dialogs.length = 0;
    answers = [];
    // Each prompt or confirm takes the next answer: a text for a prompt, true/false for a confirm.
    page.on('dialog', (dialog: Dialog) => {
      dialogs.push({ type: dialog.type(), message: dialog.message() });
      const answer = answers.shift();
      void (answer === false || answer === undefined ? dialog.dismiss() : dialog.accept(typeof answer === 'string' ? answer : undefined));
    });
    await page.goto(`${await h.app.getUrl()}/outbox/`);
  });
  afterEach(async () => {
    await browser?.close();
    await h?.close();
  });

  const event = (aggregateId: string, n: number) => ({ type: `orders.step-${n}`, aggregateType: 'order', aggregateId, payload: { n } });
  const ids = (messages: OutgoingMessage[]) => messages.map((m) => m.envelope.id);
  const rows = async () => Number(await page.locator('#messages').getAttribute('data-rows'));
  async function publishAll(): Promise<void> {
    const relay = h.relay(`relay-${Date.now()}`, transport);
    while ((await relay.publishBatch()).claimed > 0);
  }
  const status = async (id: string) => (await h.dataSource.query('SELECT status FROM outbox_messages WHERE id = ?', [id]))[0].status;

  it('replays the message of the dialog after asking why, and offers it for published messages only', async () => {
    const [published, pending] = await h.add([event('o-1', 1), event('o-2', 1)]);
    await h.relay('first', transport).publishBatch();
    await h.dataSource.query(`UPDATE outbox_messages SET status = 'pending', published_at = NULL WHERE id = ?`, [pending]);
    await page.locator('#refresh').click();
    await waitFor('two rows', async () => (await rows()) === 2);

    await page.locator('#messages tbody tr', { hasText: 'o-2' }).click();
    await waitFor('the dialog', () => page.locator('#detail').isVisible());
    expect(await page.locator('#detail-replay').isDisabled()).toBe(true);
    await page.locator('#detail-close').click();

    await page.locator('#messages tbody tr', { hasText: 'o-1' }).click();
    await waitFor('the replay button enabled', async () => !(await page.locator('#detail-replay').isDisabled()));
    answers = ['partner lost the event'];
    await page.locator('#detail-replay').click();
    await waitFor('the dialog to close', async () => !(await page.locator('#detail').isVisible()));
    expect(dialogs).toEqual([{ type: 'prompt', message: expect.stringContaining(`Why replay message ${published}?`) }]);
    expect(await status(published)).toBe('pending');
    expect(await page.locator('#replay-status').textContent()).toBe('1 message(s) replayed');

    transport.delivered.length = 0;
    await publishAll();
    // The replayed one carries the reason; the one that was pending all along does not.
    const sent = transport.delivered.map((m) => [m.envelope.id, m.headers['outbox-replay-reason'], m.headers['outbox-replayed-by']]);
    expect(sent).toHaveLength(2);
    expect(sent).toEqual(expect.arrayContaining([[published, 'partner lost the event', 'console'], [pending, undefined, undefined]]));
  });

  it('replays every published message of the applied filter after a confirm with the counted number; a cancel changes nothing', async () => {
    const o1 = await h.add([event('o-1', 1), event('o-1', 2), event('o-1', 3)]);
    const [other] = await h.add([event('o-9', 1)]);
    await publishAll();
    await page.locator('#filters [name=aggregateId]').fill('o-1');
    await page.locator('#filters [name=status]').selectOption('published');
    await page.locator('#filters button[type=submit]').click();
    await waitFor('the filtered rows', async () => (await rows()) === 3);

    answers = ['consumer wiped', false];
    await page.locator('#bulk-replay').click();
    await waitFor('the confirm', () => dialogs.length === 2);
    expect(dialogs[1]).toEqual({ type: 'confirm', message: 'Replay 3 published message(s) matching the filter, with their ids, to their destinations, in their original order?' });
    expect(await status(o1[0])).toBe('published');

    answers = ['consumer wiped', true];
    await page.locator('#bulk-replay').click();
    await waitFor('the outcome', async () => (await page.locator('#replay-status').textContent()) === '3 message(s) replayed');
    expect(await Promise.all([...o1, other].map(status))).toEqual(['pending', 'pending', 'pending', 'published']);

    transport.delivered.length = 0;
    await publishAll();
    expect(ids(transport.delivered)).toEqual(o1);
    expect(new Set(transport.delivered.map((m) => m.headers['outbox-replay-reason']))).toEqual(new Set(['consumer wiped']));
  });

  it('says so when the status filter is not "published", and asks nothing', async () => {
    await page.locator('#filters [name=status]').selectOption('dead');
    await page.locator('#filters button[type=submit]').click();
    await page.locator('#bulk-replay').click();
    await waitFor('the refusal', () => page.locator('#error').isVisible());
    expect(await page.locator('#error').textContent()).toContain('A replay takes published messages');
    expect(dialogs).toEqual([]);
  });
});
