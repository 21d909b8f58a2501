import { createServer, type Server } from 'node:net';
import { readFileSync } from 'node:fs';

/** A TCP port of 127.0.0.1 that nothing listens on right now (the OS picks it). */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port;
}

/**
 * `count` different free ports of 127.0.0.1. All are held open until every one is picked: ports
 * asked for one by one, each closed at once, can come back twice (the OS may hand a just-closed port
 * out again), and two instances then fail with EADDRINUSE.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
    }
    return servers.map((server) => (server.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/**
 * A free port of 127.0.0.1 below the OS's ephemeral range, for a server a test stops and starts again
 * on the same port. A port the OS picked (above) lies inside that range, and while its server is down
 * an outgoing connection of any test may be given it as its own local port — the server then cannot
 * listen again (EADDRINUSE).
 */
export async function freeRestartablePort(): Promise<number> {
  // Below 28,000 as well: scripts/services.sh keeps its services on 28xxx, and one of them stopped
  // for an outage test must find its port free when it resumes.
  const low = 20_000;
  const high = Math.min(ephemeralRangeStart(), 28_000);
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await canListen(port)) return port;
  }
  throw new Error(`No free port between ${low} and ${high} after 100 tries: is something holding most of them?`);
}

function ephemeralRangeStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}

function canListen(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
