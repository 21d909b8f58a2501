import { Controller, Inject, Module, UseGuards, type DynamicModule, type MiddlewareConsumer, type NestModule, type Provider, type Type } from '@nestjs/common';
import { loadOptionalPeers } from '../core/optional-peer';
import { OUTBOX_CONSOLE_OPTIONS } from './outbox-console.constants';
import { resolveConsoleOptions, type OutboxConsoleOptions } from './outbox-console.options';
import { OutboxConsoleService } from './outbox-console.service';
import { ConsoleErrorFilter } from './console-error.filter';
import { ConsoleActionGuard } from './console-action.guard';
import { CloseConnectionsWhenClosing, ConsoleConnections } from './console-connections';
import { consoleNeedsPackage } from './outbox-console.messages';
import { OutboxAsyncApiConsoleController } from './asyncapi/outbox-asyncapi-console.controller';
import { useOutboxNamed } from '../nest/named/outbox-tokens';
import { OUTBOX_CONNECTION, OUTBOX_EXTRAS } from '../nest/outbox.constants';
import { OutboxStats } from '../nest/observe/outbox.stats';
import { OutboxRelayHost } from '../nest/outbox-relay.host';
import { OutboxAsyncApi } from '../nest/asyncapi/outbox-asyncapi.service';
import { outboxConsoleTarget } from './console-target';
import { TenantConsoleListController } from './tenants/tenant-console-list.controller';
import { TenantConsoles, tenantConsoleTarget } from './tenants/tenant-consoles';

// This mount's controllers: the routes the connection middleware covers.
const MOUNTED_CONTROLLERS = Symbol('OutboxConsoleMountedControllers');

/**
 * The operator console: a page and a REST admin under `path`, behind `guard`. Opt-in: nothing is
 * served unless this module is imported, next to `OutboxModule` (whose table and stats it uses).
 *
 * `OutboxConsoleModule.forRoot({ path: 'ops/outbox', guard: OperatorGuard })`
 */
@Module({})
export class OutboxConsoleModule implements NestModule {
  constructor(@Inject(MOUNTED_CONTROLLERS) private readonly controllers: Type[]) {}

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(CloseConnectionsWhenClosing).forRoutes(...this.controllers);
  }

  static forRoot(options: OutboxConsoleOptions): DynamicModule {
    const resolved = resolveConsoleOptions(options);
    const { OutboxConsoleController } = loadController();
    // A subclass per mount, so that the path and guard of one mount never leak into another.
    class MountedOutboxConsoleController extends OutboxConsoleController {}
    // Over tenant outboxes, each tenant's console sits one level below the list: <path>/<tenant>/.
    Controller(resolved.tenants ? `${resolved.path}/:tenant` : resolved.path)(MountedOutboxConsoleController);
    if (resolved.guard) UseGuards(resolved.guard)(MountedOutboxConsoleController);
    const guardProvider: Provider[] = typeof resolved.guard === 'function' ? [resolved.guard as Type] : [];
    const shared: Provider[] = [{ provide: OUTBOX_CONSOLE_OPTIONS, useValue: resolved }, OutboxConsoleService, ConsoleErrorFilter, ConsoleActionGuard, ConsoleConnections, ...guardProvider];
    if (resolved.tenants) {
      const list = mountController(TenantConsoleListController, resolved.path, resolved.guard);
      const controllers = [list, MountedOutboxConsoleController];
      return {
        module: OutboxConsoleModule,
        controllers,
        providers: [...shared, { provide: MOUNTED_CONTROLLERS, useValue: controllers }, TenantConsoles, tenantConsoleTarget],
      };
    }
    const poison = mountPoisonController(resolved.path, resolved.guard);
    const asyncApi = mountAsyncApiController(resolved.path, resolved.guard);
    return {
      module: OutboxConsoleModule,
      controllers: [MountedOutboxConsoleController, poison, asyncApi],
      providers: [...shared, { provide: MOUNTED_CONTROLLERS, useValue: [MountedOutboxConsoleController, poison, asyncApi] }, outboxConsoleTarget,
        // The named outbox's table, stats and relay, in place of those an unnamed outbox exports to every module.
        ...useOutboxNamed([OUTBOX_CONNECTION, OUTBOX_EXTRAS, OutboxStats, OutboxRelayHost, OutboxAsyncApi], resolved.outbox)],
    };
  }
}

/** A subclass of `base` at `path`, behind `guard`. */
function mountController(base: Type, path: string, guard: Parameters<typeof UseGuards>[0] | undefined): Type {
  const Mounted = class extends base {};
  Controller(path)(Mounted);
  if (guard) UseGuards(guard)(Mounted);
  return Mounted;
}

/** The inbox's poison records, at the same path and behind the same guard as the rest of the console. */
function mountPoisonController(path: string, guard: Parameters<typeof UseGuards>[0] | undefined): Type {
  const { OutboxPoisonConsoleController } = require('./poison/outbox-poison-console.controller') as typeof import('./poison/outbox-poison-console.controller');
  class MountedOutboxPoisonConsoleController extends OutboxPoisonConsoleController {}
  Controller(path)(MountedOutboxPoisonConsoleController);
  if (guard) UseGuards(guard)(MountedOutboxPoisonConsoleController);
  return MountedOutboxPoisonConsoleController;
}

/** The AsyncAPI document of what the app publishes, at the same path and behind the same guard. */
function mountAsyncApiController(path: string, guard: Parameters<typeof UseGuards>[0] | undefined): Type {
  class MountedOutboxAsyncApiConsoleController extends OutboxAsyncApiConsoleController {}
  Controller(path)(MountedOutboxAsyncApiConsoleController);
  if (guard) UseGuards(guard)(MountedOutboxAsyncApiConsoleController);
  return MountedOutboxAsyncApiConsoleController;
}

// The controller's DTOs need class-validator and class-transformer, which only console users install.
function loadController(): typeof import('./outbox-console.controller') {
  loadOptionalPeers(['class-validator', 'class-transformer'], ([name]) => consoleNeedsPackage(name));
  return require('./outbox-console.controller') as typeof import('./outbox-console.controller');
}
