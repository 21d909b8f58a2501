import { connect, createServer, type Server, type Socket } from 'node:net';

/** One proxied connection: the app's socket, the database's, and what a stall held back. */
interface Link {
  client: Socket;
  upstream: Socket;
  held: Array<{ to: Socket; chunk: Buffer }>;
  closed: boolean;
}

/**
 * A TCP proxy in front of a database that can go silent the way a hung server or a network path
 * that drops packets does: while `stall()`ed it forwards nothing, in either direction and on every
 * connection (new ones included), and passes on no close either, so both sides keep their sockets
 * open and wait. `resume()` delivers what was held back, in order, then forwards again.
 */
export class StallingProxy {
  private readonly links = new Set<Link>();
  private stalled = false;
  /** Bytes that arrived while stalled and were held back: the app sent a statement that now waits. */
  heldBytes = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on a free port of 127.0.0.1 and forwards each connection to the host and port of `targetUrl`. */
  static async start(targetUrl: string): Promise<StallingProxy> {
    const target = new URL(targetUrl);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const proxy = new StallingProxy(server, (server.address() as { port: number }).port);
    server.on('connection', (client) => proxy.forward(client, target.hostname, Number(target.port)));
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const through = new URL(url);
    through.hostname = '127.0.0.1';
    through.port = String(this.port);
    return through.toString();
  }

  stall(): void {
    this.stalled = true;
    this.heldBytes = 0;
  }

  resume(): void {
    this.stalled = false;
    for (const link of this.links) {
      for (const { to, chunk } of link.held.splice(0)) to.write(chunk);
      if (link.closed) this.cut(link);
    }
  }

  /** Stops listening and cuts every connection. */
  async close(): Promise<void> {
    for (const link of this.links) this.cut(link);
    await new Promise((resolve) => this.server.close(resolve));
  }

  private forward(client: Socket, host: string, port: number): void {
    const upstream = connect(port, host);
    const link: Link = { client, upstream, held: [], closed: false };
    this.links.add(link);
    const closed = () => {
      link.closed = true;
      // A close is held back too: the other side sees nothing until the stall ends.
      if (!this.stalled) this.cut(link);
    };
    for (const [from, to] of [[client, upstream], [upstream, client]]) {
      from.on('data', (chunk: Buffer) => {
        if (!this.stalled) return void to.write(chunk);
        link.held.push({ to, chunk });
        this.heldBytes += chunk.length;
      });
      from.on('end', closed);
      from.on('close', closed);
      from.on('error', closed);
    }
  }

  private cut(link: Link): void {
    this.links.delete(link);
    link.client.destroy();
    link.upstream.destroy();
  }
}
