import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, type BeforeApplicationShutdown, type NestMiddleware } from '@nestjs/common';

/**
 * Knows when the app has begun to close. An open console page asks again every refreshIntervalMs
 * on a keep-alive connection, and Node's `server.close()` waits for every connection to end: it
 * closes the ones idle at that moment, but one with a request in flight stays, is reused by the
 * next refresh, and `app.close()` never returns while the page is open.
 */
@Injectable()
export class ConsoleConnections implements BeforeApplicationShutdown {
  closing = false;

  // Nest calls this before it closes the HTTP server.
  beforeApplicationShutdown(): void {
    this.closing = true;
  }
}

/**
 * Once the app is closing, no console request keeps its connection: one that arrives says so in its
 * response (`Connection: close`), one that was in flight has its connection ended when its response
 * is sent. A middleware rather than an interceptor: it runs before the guard, so a refused request
 * is covered too.
 */
@Injectable()
export class CloseConnectionsWhenClosing implements NestMiddleware {
  constructor(private readonly connections: ConsoleConnections) {}

  use(request: IncomingMessage, response: ServerResponse, next: () => void): void {
    if (this.connections.closing) response.setHeader('Connection', 'close');
    else response.once('finish', () => this.connections.closing && request.socket.end());
    next();
  }
}
