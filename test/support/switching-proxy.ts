import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a database whose target can move, the way a virtual IP or a DNS name
 * moves to a promoted standby in a failover: `switchTo()` cuts every connection it carries (the app
 * sees its sessions end, as it does when the old primary goes) and sends new ones to the new target.
 * The app keeps the one address it was given (`url`) throughout.
 */
export class SwitchingProxy {
  private readonly connections = new Set<Socket>();
  private target: URL;

  private constructor(
    private readonly server: Server,
    target: string,
  ) {
    this.target = new URL(target);
    server.on('connection', (client) => this.forward(client));
  }

  /** Listens on a free port of 127.0.0.1 and forwards each connection to the host and port of `targetUrl`. */
  static async start(targetUrl: string): Promise<SwitchingProxy> {
    const server = createServer();
    // Port 0: the OS picks a free port and it stays ours, with no window for another process to take it.
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    return new SwitchingProxy(server, targetUrl);
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  /** The target's URL (its user, database and parameters) through the proxy: what the app connects to. */
  get url(): string {
    const through = new URL(this.target);
    through.hostname = '127.0.0.1';
    through.port = String(this.port);
    return through.toString();
  }

  /** New connections go to `targetUrl`'s host and port; the current ones are cut, both sides. */
  switchTo(targetUrl: string): void {
    this.target = new URL(targetUrl);
    for (const socket of this.connections) socket.destroy();
    this.connections.clear();
  }

  /** Stops listening and cuts every connection. Safe to call twice. */
  async close(): Promise<void> {
    for (const socket of this.connections) socket.destroy();
    this.connections.clear();
    if (!this.server.listening) return;
    await new Promise((resolve) => this.server.close(resolve));
  }

  private forward(client: Socket): void {
    const upstream = connect(Number(this.target.port), this.target.hostname);
    // Either side ending ends the other: a target that refuses (down) is a connection refused to the app.
    const cut = () => {
      client.destroy();
      upstream.destroy();
      this.connections.delete(client);
      this.connections.delete(upstream);
    };
    for (const socket of [client, upstream]) {
      this.connections.add(socket);
      socket.on('error', cut);
      socket.on('close', cut);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
