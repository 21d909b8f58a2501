import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.OUTBOX_CHROMIUM ?? '/usr/bin/chromium';

// Quiet, self-contained runs: no GPU, no sandbox (containers), nothing fetched in the background.
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Debian's headless Chromium with a fresh profile; fails (never skips) with how to install it. */
export async function launchChromium(options: { httpCredentials?: { username: string; password: string } } = {}): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM}. Install it with "sudo apt-get install -y chromium" (scripts/test.sh does it), or set OUTBOX_CHROMIUM.`);
  }
  const profile = mkdtempSync(join(tmpdir(), 'outbox-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1400, height: 1000 }, ...options });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
