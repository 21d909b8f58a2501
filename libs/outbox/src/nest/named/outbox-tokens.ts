import { Inject, type Provider, type Type } from '@nestjs/common';
import { namedOutboxToken } from '../../core/outbox-name';

/** What an outbox offers for injection; a named outbox offers each under `getOutboxToken(what, name)`. */
export type OutboxInjectable = Type<unknown> | symbol;

/**
 * The token of `what` (`OutboxPublisher`, `OutboxAdmin`, `OutboxStats`, …) of the outbox named
 * `name`; without a name, `what` itself, as the outbox declared without one registers it.
 */
export function getOutboxToken(what: OutboxInjectable, name?: string): OutboxInjectable | symbol {
  if (name === undefined) return what;
  return namedOutboxToken(typeof what === 'symbol' ? (what.description ?? 'token') : what.name, name);
}

/** `@InjectOutbox(OutboxPublisher, 'orders_eu')`: the provider of the outbox declared with that name. */
export function InjectOutbox(what: OutboxInjectable, name: string): ParameterDecorator & PropertyDecorator {
  return Inject(getOutboxToken(what, name));
}

/**
 * What a module declared with `name` exports: each of `what` under its named token (an alias of
 * the module's own provider), and nothing under the shared class tokens, so that injecting
 * `OutboxPublisher` never picks one of several outboxes by chance.
 */
export function outboxExports(what: readonly OutboxInjectable[], name: string | undefined): { providers: Provider[]; exports: (OutboxInjectable | symbol)[] } {
  if (name === undefined) return { providers: [], exports: [...what] };
  const providers = what.map((token) => ({ provide: getOutboxToken(token, name), useExisting: token }));
  return { providers, exports: providers.map((provider) => provider.provide) };
}

/**
 * For a module that works on one outbox (the console): `what` inside it resolves to the named
 * outbox's provider, shadowing whatever an unnamed outbox exports globally.
 */
export function useOutboxNamed(what: readonly OutboxInjectable[], name: string | undefined): Provider[] {
  if (name === undefined) return [];
  return what.map((token) => ({ provide: token, useExisting: getOutboxToken(token, name) }));
}
