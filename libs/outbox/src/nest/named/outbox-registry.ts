import { Global, Module } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { OUTBOX_NAMES, type OutboxNames } from '../../core/asyncapi/asyncapi-source';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { dataSourceCapturedTwice, outboxNameTaken } from '../../core/outbox-name.messages';

/** The outboxes of one app, so that two declarations cannot share a name or capture one data source. */
export class OutboxRegistry implements OutboxNames {
  private readonly names = new Set<string | undefined>();
  private readonly capturing = new Map<DataSource, string | undefined>();

  register(name: string | undefined, dataSource: DataSource | null, dataSourceName: string | undefined): void {
    if (this.names.has(name)) throw new OutboxConfigurationError(outboxNameTaken(name));
    // Every outbox on a data source hooks its subscriber into it: two would both write each event.
    const other = dataSource ? this.capturing.get(dataSource) : undefined;
    if (dataSource && this.capturing.has(dataSource)) throw new OutboxConfigurationError(dataSourceCapturedTwice(dataSourceName ?? 'default', other, name));
    this.names.add(name);
    if (dataSource) this.capturing.set(dataSource, name);
  }

  declared(): ReadonlyArray<string | undefined> {
    return [...this.names];
  }
}

/** Imported by every `OutboxModule`; Nest makes one per app, shared by all of them. */
@Global()
@Module({ providers: [OutboxRegistry, { provide: OUTBOX_NAMES, useExisting: OutboxRegistry }], exports: [OutboxRegistry, OUTBOX_NAMES] })
export class OutboxRegistryModule {}
