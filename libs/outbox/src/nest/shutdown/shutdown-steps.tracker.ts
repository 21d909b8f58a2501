import type { INestApplicationContext } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { shutdownStageOf } from './shutdown-stage';

const HOOKS = ['onModuleDestroy', 'beforeApplicationShutdown', 'onApplicationShutdown'] as const;

/** The little of a Nest module (an entry of the public ModulesContainer) read here: no import of Nest's injector. */
interface ModuleView {
  readonly name?: string;
  readonly metatype?: { name?: string };
  readonly providers: Map<unknown, { instance?: unknown }>;
  readonly controllers: Map<unknown, { instance?: unknown }>;
}

interface RunningStep {
  readonly label: string;
  readonly instance: object | undefined;
  readonly since: number;
}

/**
 * Knows which lifecycle hooks, servers and microservices an application's close() is still
 * waiting for. Nest runs them one after another and says nothing while one hangs; each is wrapped
 * (on its own instance: nothing is patched on a prototype) to record when it starts and settles.
 */
export class ShutdownStepsTracker {
  private readonly running = new Set<RunningStep>();
  private readonly wrapped = new WeakSet<object>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Wraps every hook, the HTTP server's close and each connected microservice's close. Safe to call twice. */
  track(app: INestApplicationContext): this {
    const modules = app.get(ModulesContainer, { strict: false }) as unknown as Map<string, ModuleView>;
    for (const module of modules.values()) {
      const moduleName = module.metatype?.name ?? module.name ?? 'a module';
      for (const { instance } of [...module.providers.values(), ...module.controllers.values()]) {
        if (!instance || typeof instance !== 'object' || this.wrapped.has(instance)) continue;
        this.wrapped.add(instance);
        const owner = instance.constructor?.name || 'a provider';
        for (const hook of HOOKS) this.wrap(instance, hook, `${moduleName} › ${owner}.${hook}()`);
      }
    }
    const web = app as Partial<{ getHttpAdapter(): unknown; getMicroservices(): unknown[] }>;
    const adapter = typeof web.getHttpAdapter === 'function' ? web.getHttpAdapter() : undefined;
    if (adapter && typeof adapter === 'object' && !this.wrapped.has(adapter)) {
      this.wrapped.add(adapter);
      this.wrap(adapter, 'close', 'the HTTP server: close()');
    }
    const microservices = typeof web.getMicroservices === 'function' ? web.getMicroservices() : [];
    microservices.forEach((microservice, index) => {
      if (!microservice || typeof microservice !== 'object' || this.wrapped.has(microservice)) return;
      this.wrapped.add(microservice);
      this.wrap(microservice, 'close', `microservice ${index + 1} (${serverName(microservice)}): close()`);
    });
    return this;
  }

  /** What is still running, the oldest first, with the stage a host reports for itself. */
  pending(): Array<{ step: string; runningMs: number }> {
    const at = this.now();
    return [...this.running].map(({ label, instance, since }) => {
      const stage = instance && shutdownStageOf(instance);
      return { step: stage ? `${label}: ${stage}` : label, runningMs: at - since };
    });
  }

  private wrap(target: object, method: string, label: string): void {
    const original = (target as Record<string, unknown>)[method];
    if (typeof original !== 'function') return;
    const steps = this.running;
    const now = this.now;
    const instance = HOOKS.includes(method as (typeof HOOKS)[number]) ? target : undefined;
    Object.defineProperty(target, method, {
      configurable: true,
      writable: true,
      value: function tracked(this: unknown, ...args: unknown[]) {
        const step: RunningStep = { label, instance, since: now() };
        steps.add(step);
        try {
          const result = (original as (...a: unknown[]) => unknown).apply(this, args);
          if (result && typeof (result as Promise<unknown>).then === 'function') {
            return (result as Promise<unknown>).finally(() => steps.delete(step));
          }
          steps.delete(step);
          return result;
        } catch (error) {
          steps.delete(step);
          throw error;
        }
      },
    });
  }
}

// NestMicroservice keeps its transport server in a field of its own; its class name (ServerKafka,
// ServerTCP, a custom strategy's) is what tells an operator which broker the close waits for.
function serverName(microservice: object): string {
  const server = (microservice as { serverInstance?: object }).serverInstance;
  return server?.constructor?.name ?? microservice.constructor?.name ?? 'microservice';
}
