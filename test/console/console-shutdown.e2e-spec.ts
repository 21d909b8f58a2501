import { Agent, get } from 'node:http';
import type { Server } from 'node:http';
import { createConsoleHarness, type ConsoleHarness } from '../support/console.harness';
import { waitFor } from '../support/wait-for';

/**
 * An open console page refreshes on a keep-alive connection, and Node's server.close() waits for
 * every connection to end: `app.close()` must not wait for the operator to close the tab. A request
 * is held at the guard while the app begins to close, as a refresh in flight would be.
 */
describe('Outbox console: the app closes while a page keeps refreshing', () => {
  let h: ConsoleHarness | undefined;
  let agent: Agent | undefined;
  afterEach(async () => {
    agent?.destroy();
    await h?.close();
  });

  it('ends the console connections once the app is closing, so app.close() returns', async () => {
    let held!: () => void;
    const gate = new Promise<void>((resolve) => (held = resolve));
    let entered!: () => void;
    const guardEntered = new Promise<void>((resolve) => (entered = resolve));
    let first = true;
    const guard = {
      // The first request waits at the guard until the test lets it go; the others pass at once.
      canActivate: async () => {
        if (!first) return true;
        first = false;
        entered();
        await gate;
        return true;
      },
    };
    const harness = (h = await createConsoleHarness('sqlite', { guard }));
    await harness.app.listen(0, '127.0.0.1');
    const url = `${await harness.app.getUrl()}/outbox/api/summary`;

    // A client that asks again 50 ms after each answer, on one kept-alive connection, as the page does.
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const answers: Array<{ status: number; connection?: string }> = [];
    const failures: string[] = [];
    let polling = true;
    const poll = () => {
      if (!polling) return;
      get(url, { agent }, (response) => {
        response.resume();
        response.on('end', () => {
          answers.push({ status: response.statusCode ?? 0, connection: response.headers.connection });
          setTimeout(poll, 50);
        });
      }).on('error', (error: NodeJS.ErrnoException) => {
        failures.push(error.code ?? error.message);
        setTimeout(poll, 50);
      });
    };
    poll();
    await guardEntered;

    const closed = harness.close().then(() => 'closed' as const);
    h = undefined;
    // The close has reached the HTTP server (after the shutdown hooks): only then does the held request go on.
    await waitFor('the server to stop listening', () => !(harness.app.getHttpServer() as Server).listening);
    held();
    const outcome = await Promise.race([closed, new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), 10_000).unref())]);
    expect(outcome).toBe('closed');
    // The held request was answered; the next one finds nobody listening.
    await waitFor('the next request refused', () => failures.length > 0);
    polling = false;
    expect(answers).toEqual([{ status: 200, connection: 'keep-alive' }]);
    expect(failures[0]).toMatch(/^(ECONNREFUSED|ECONNRESET)$/);
  });
});
