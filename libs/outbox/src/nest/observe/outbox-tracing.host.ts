import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import type * as OtelApi from '@opentelemetry/api';
import { OutboxObservers } from './outbox-observers.registry';
import { OUTBOX_MODULE_OPTIONS } from '../outbox.module-definition';
import type { OutboxModuleOptions } from '../outbox-module.options';
import { loadOptional } from '../../core/optional-peer';
import { OutboxTracing, traceContextCapture } from '../../core/observe/tracing/outbox-tracing';
import { resolveTracingOptions } from '../../core/observe/tracing/tracing.options';

/** With `tracing` set: the write-time capture of the trace context, and publish spans on the relay. */
@Injectable()
export class OutboxTracingHost implements OnModuleInit {
  /** Headers of the active trace context, for the writer; `undefined` when tracing is off. */
  readonly capture: (() => Record<string, string>) | undefined;
  private readonly tracing: OutboxTracing | undefined;

  constructor(@Inject(OUTBOX_MODULE_OPTIONS) options: OutboxModuleOptions, private readonly observers: OutboxObservers) {
    const resolved = resolveTracingOptions(options.tracing);
    if (!resolved) return;
    const otel = loadOptional<typeof OtelApi>('@opentelemetry/api', 'tracing');
    this.capture = traceContextCapture(otel);
    this.tracing = new OutboxTracing(otel, resolved.tracerName);
  }

  onModuleInit(): void {
    if (this.tracing) this.observers.add(this.tracing);
  }
}
