import { Injectable } from '@nestjs/common';
import type { OutboxRoute } from '../../core/outbox-options';
import { InProcessTransport, IN_PROCESS_TRANSPORT, type InProcessHandler } from '../../transports/in-process.transport';

export interface RegisteredHandler {
  name: string;
  type: string;
  /** `Class.method`, for messages. */
  owner: string;
  run: InProcessHandler;
}

/** The in-process handlers found at bootstrap: routes for the writer, a transport for the relay. */
@Injectable()
export class InProcessHandlers {
  private readonly handlers = new Map<string, RegisteredHandler>();

  register(handler: RegisteredHandler): void {
    this.handlers.set(handler.name, handler);
  }

  get(name: string): RegisteredHandler | undefined {
    return this.handlers.get(name);
  }

  /** One route per handler: every event of its type gets a row for it. */
  routes(): OutboxRoute[] {
    return [...this.handlers.values()].map((handler) => ({ events: [handler.type], transport: IN_PROCESS_TRANSPORT, topic: handler.name }));
  }

  /** The transport running them, or undefined when there are none. */
  transport(): InProcessTransport | undefined {
    if (this.handlers.size === 0) return undefined;
    return new InProcessTransport(new Map([...this.handlers].map(([name, handler]) => [name, handler.run])));
  }
}
