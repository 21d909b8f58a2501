import type { ModuleRef } from '@nestjs/core';
import { ClientProxy } from '@nestjs/microservices';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { invalidOption, invalidTransportName, missingTransport, notATransport, notATransportValue, unknownRouteTransport, unknownTransportToken } from '../core/outbox.messages';
import { DEFAULT_TRANSPORT, type OutboxRoute } from '../core/outbox-options';
import { isOutboxTransport, type OutboxTransport } from '../core/outbox-transport.port';
import { ClientProxyTransport } from '../transports/client-proxy.transport';
import { withEnvelopeFormats } from '../transports/cloudevents/envelope-formats';
import { withSchemaRegistry } from '../schema-registry/schema-registry.transport';
import { schemasOf } from './schema-registry/outbox-schemas.provider';
import { resolveEnvelopeOptions } from '../core/cloudevents/envelope-options';
import { IN_PROCESS_TRANSPORT } from '../transports/in-process.transport';
import { reservedTransportName } from '../core/in-process.messages';
import { nameProblem, nameRule } from '../core/names';
import type { OutboxModuleOptions, OutboxTransportOption } from './outbox-module.options';

/** Turns the `transport` / `transports` options into transports by name, each sending the format the `envelope` option (and `schemaRegistry`) asks for, failing on what cannot work. */
export function resolveTransports(options: OutboxModuleOptions, moduleRef: ModuleRef, inProcess?: OutboxTransport): Map<string, OutboxTransport> {
  const transports = new Map<string, OutboxTransport>();
  if (options.transport !== undefined && options.transport !== null) {
    transports.set(DEFAULT_TRANSPORT, resolveTransport(options.transport, moduleRef, 'transport'));
  }
  for (const [name, option] of Object.entries(options.transports ?? {})) {
    if (name === IN_PROCESS_TRANSPORT) throw new OutboxConfigurationError(reservedTransportName(name));
    transports.set(name, resolveTransport(option, moduleRef, `transports.${name}`));
  }
  // In-process handlers need no broker: an app with handlers only has a transport all the same.
  if (inProcess) transports.set(IN_PROCESS_TRANSPORT, inProcess);
  if (transports.size === 0) throw new OutboxConfigurationError(missingTransport());
  return withSchemaRegistry(withEnvelopeFormats(transports, resolveEnvelopeOptions(options.envelope), options.routes ?? []), schemasOf(moduleRef));
}

const MAX_TRANSPORT_NAME = 64;

/**
 * Everything about `transport`, `transports` and `routes` that needs none of the app's providers:
 * a value that can be no transport, the reserved name, a bad name, a route to an unknown name. Runs where
 * `forRoot` is declared (before any module connects), and again at init for `forRootAsync`.
 */
export function checkTransportOptions(options: OutboxModuleOptions): void {
  if (options.transport !== undefined && options.transport !== null) checkShape(options.transport, 'transport');
  const { transports } = options as { transports?: unknown };
  if (transports !== undefined && (typeof transports !== 'object' || transports === null || Array.isArray(transports))) {
    throw new OutboxConfigurationError(invalidOption('transports', 'an object of named transports, e.g. { partner: \'PARTNER_RMQ\' }', transports));
  }
  for (const [name, option] of Object.entries(options.transports ?? {})) {
    if (name === IN_PROCESS_TRANSPORT) throw new OutboxConfigurationError(reservedTransportName(name));
    // Rows record the name in their varchar(64) "transport" column: a longer one would fail every insert.
    const problem = nameProblem(name, MAX_TRANSPORT_NAME);
    if (problem) throw new OutboxConfigurationError(invalidTransportName(name, problem, nameRule(MAX_TRANSPORT_NAME)));
    checkShape(option, `transports.${name}`);
  }
  checkRouteTransports(options);
}

/** A token is looked up at init; any other value must be a transport already. */
function checkShape(option: OutboxTransportOption, optionName: string): void {
  if (typeof option === 'string' || typeof option === 'symbol' || typeof option === 'function') return;
  if (!(option instanceof ClientProxy) && !isOutboxTransport(option)) throw new OutboxConfigurationError(notATransportValue(optionName, option));
}

/** Routes must name a configured transport; checked even on instances that do not relay. */
function checkRouteTransports(options: OutboxModuleOptions): void {
  const known = [...(options.transport !== undefined ? [DEFAULT_TRANSPORT] : []), ...Object.keys(options.transports ?? {})];
  (options.routes ?? []).forEach((route: OutboxRoute, index) => {
    if (!known.includes(route.transport)) throw new OutboxConfigurationError(unknownRouteTransport(index, route.transport, known));
  });
}

function resolveTransport(option: OutboxTransportOption, moduleRef: ModuleRef, optionName: string): OutboxTransport {
  if (typeof option === 'string' || typeof option === 'symbol' || typeof option === 'function') {
    const label = typeof option === 'string' ? `"${option}"` : typeof option === 'symbol' ? option.toString() : option.name;
    let provider: unknown;
    try {
      provider = moduleRef.get(option, { strict: false });
    } catch {
      throw new OutboxConfigurationError(unknownTransportToken(optionName, label));
    }
    return adapt(provider, label, optionName);
  }
  checkShape(option, optionName);
  return adapt(option, 'given', optionName);
}

function adapt(value: unknown, label: string, optionName: string): OutboxTransport {
  if (value instanceof ClientProxy) return new ClientProxyTransport(value);
  if (isOutboxTransport(value)) return value;
  throw new OutboxConfigurationError(notATransport(optionName, label, value));
}
