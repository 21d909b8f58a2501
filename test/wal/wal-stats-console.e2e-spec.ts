import type { Page } from 'playwright-core';
import { OutboxStats } from '@nest-outbox/outbox/observability';
import { OutboxConsoleModule } from '@nest-outbox/outbox/console';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { launchChromium } from '../support/chromium';
import { createConsoleHarness } from '../support/console.harness';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalSandbox } from '../support/wal.harness';

/** The slot's lag in `OutboxStats`, the console's summary and its page header, on the shared PostgreSQL in the WAL mode. */
describe('WAL delivery mode: the slot in the stats snapshot and the console', () => {
  let sandbox: WalSandbox;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  beforeAll(async () => (sandbox = await walSandbox('wal_stats')));
  afterAll(async () => {
    await browser?.close();
    await sandbox?.drop();
  });

  it('carries the streamed slot in the snapshot, the summary and the header; a writer without a reader shows it not streamed', async () => {
    const streaming = await sandbox.start({ transport: new RecordingOutboxTransport(), stats: { refreshIntervalMs: 1 } }, { imports: [OutboxConsoleModule.forRoot({ noAuth: true, refreshIntervalMs: 1_000 })], http: true });
    const stats = streaming.module.get(OutboxStats);
    const streamed = await waitFor('the slot streamed in the snapshot', async () => {
      const snapshot = await stats.snapshot({ fresh: true });
      return snapshot.wal?.active ? snapshot.wal : undefined;
    });
    expect(streamed).toEqual({ slot: sandbox.slotName, retainedBytes: expect.any(Number), lagSeconds: streamed.lagSeconds, active: true });
    expect(streamed.retainedBytes).toBeGreaterThanOrEqual(0);
    expect(stats.peek()?.wal).toEqual(streamed);

    const base = `${await streaming.http!.getUrl()}/outbox/`;
    const summary = (await (await fetch(`${base}api/summary?fresh=true`)).json()) as { stats: { wal?: unknown } };
    expect(summary.stats.wal).toMatchObject({ slot: sandbox.slotName, active: true });

    browser = await launchChromium();
    const page: Page = await browser.context.newPage();
    await page.goto(base);
    const header = await waitFor('the WAL line in the header', async () => ((await page.locator('#wal').isVisible()) ? page.locator('#wal').textContent() : undefined));
    expect(header).toMatch(new RegExp(`^WAL slot ${sandbox.slotName}: \\d+(\\.\\d)? (B|KiB|MiB) retained, lag .+, streamed$`));
    await streaming.close();

    // A write-only instance on the same slot: nobody reads it now, and what it writes stays retained.
    const writer = await sandbox.start({ relay: false, stats: { refreshIntervalMs: 1 }, wal: { slotName: sandbox.slotName } }, { imports: [OutboxConsoleModule.forRoot({ noAuth: true, refreshIntervalMs: 1_000 })], http: true });
    await writer.dataSource.transaction((manager) =>
      writer.publisher.add(manager, { type: 'parcel.noted', aggregateType: 'parcel', aggregateId: 'waiting', payload: { label: 'x'.repeat(200) }, topic: 'parcels' }),
    );
    const idle = await waitFor('the slot not streamed, with the event retained', async () => {
      const wal = (await writer.module.get(OutboxStats).snapshot({ fresh: true })).wal;
      return wal && !wal.active && (wal.retainedBytes ?? 0) > 200 ? wal : undefined;
    });
    expect(idle).toMatchObject({ slot: sandbox.slotName, active: false });
    await page.goto(`${await writer.http!.getUrl()}/outbox/`);
    const idleHeader = await waitFor('"not streamed" in the header', async () => {
      const text = await page.locator('#wal').textContent();
      return text?.endsWith('not streamed') ? text : undefined;
    });
    expect(idleHeader).toMatch(/retained, lag .+, not streamed$/);
    expect(await page.locator('#wal').getAttribute('class')).toContain('error');
  });

  it('has no wal in the table mode, and the header shows no WAL line', async () => {
    const h = await createConsoleHarness('postgres', { noAuth: true });
    try {
      expect((await h.app.get(OutboxStats).snapshot({ fresh: true })).wal).toBeUndefined();
      await h.app.listen(0, '127.0.0.1');
      browser ??= await launchChromium();
      const page = await browser.context.newPage();
      await page.goto(`${await h.app.getUrl()}/outbox/`);
      await waitFor('the summary shown', async () => (await page.locator('#updated').textContent())?.startsWith('updated'));
      expect(await page.locator('#wal').isHidden()).toBe(true);
    } finally {
      await h.close();
    }
  });
});
