import { type DynamicModule, Module } from '@nestjs/common';
import type { OutboxSettings } from '../core/outbox-options';
import { OutboxPublisher } from '../nest/outbox.publisher';
import { InMemoryOutbox } from './in-memory-outbox';
import { RecordingOutboxTransport } from './recording-outbox.transport';

/**
 * Replaces `OutboxModule` in a unit test: no database, no broker. Services that inject
 * `OutboxPublisher` get an `InMemoryOutbox`; get it (and the `RecordingOutboxTransport`) from the
 * testing module to run the relay and check what was published.
 */
@Module({})
export class OutboxTestingModule {
  static forRoot(settings: Omit<OutboxSettings, 'transport'> = {}): DynamicModule {
    return {
      module: OutboxTestingModule,
      global: true,
      providers: [
        RecordingOutboxTransport,
        { provide: InMemoryOutbox, inject: [RecordingOutboxTransport], useFactory: (transport: RecordingOutboxTransport) => new InMemoryOutbox(transport, settings) },
        { provide: OutboxPublisher, useExisting: InMemoryOutbox },
      ],
      exports: [RecordingOutboxTransport, InMemoryOutbox, OutboxPublisher],
    };
  }
}
