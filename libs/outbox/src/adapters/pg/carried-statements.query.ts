/** A statement held back until the transaction's next one, to be sent in the same network write. */
export interface CarriedStatement {
  readonly text: string;
  readonly values: readonly unknown[];
  /** A prepared statement's name, when it is already prepared on the connection (then it is bound, not parsed). */
  readonly name?: string;
}

/** What node-postgres' `Connection` offers a submittable query: the extended protocol's messages. */
export interface PgWire {
  parse(message: { text: string; name?: string; types?: unknown[] }): void;
  bind(message: { portal?: string; statement?: string; values: unknown[]; valueMapper: (value: unknown) => unknown }): void;
  execute(message: { portal?: string; rows?: number }): void;
  sync(): void;
  sendCopyFail(message: string): void;
  stream: { cork?(): void; uncork?(): void };
  parsedStatements: Record<string, string>;
}

interface CommandCompleteMessage {
  text: string;
}

/** What `client.query(config)` resolves with for a statement that returns no rows: its command and count. */
export interface CarriedResult {
  command: string;
  rowCount: number | null;
  rows: never[];
  fields: never[];
}

/**
 * The carried statements and the one that brings them (a COMMIT, or none), written to the server
 * in one network write behind a single Sync, as a node-postgres submittable query. Behind one Sync
 * the server skips everything after a failure: when a carried statement fails, the COMMIT after it
 * never runs and the transaction stays open and aborted, for the caller's ROLLBACK, exactly as if
 * the statement had failed when it was written.
 */
export class CarriedStatementsQuery {
  callback?: (error: Error | null, result?: CarriedResult) => void;
  private last: CarriedResult = { command: '', rowCount: null, rows: [], fields: [] };

  constructor(
    private readonly carried: readonly CarriedStatement[],
    private readonly closing: string | undefined,
    private readonly valueMapper: (value: unknown) => unknown,
  ) {}

  submit(connection: PgWire): null {
    connection.stream.cork?.();
    try {
      for (const statement of this.carried) this.send(connection, statement);
      if (this.closing !== undefined) this.send(connection, { text: this.closing, values: [] });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleCommandComplete(message: CommandCompleteMessage): void {
    const [command = '', count] = message.text.split(' ').filter((word, index, words) => index === 0 || index === words.length - 1);
    const rowCount = count === undefined ? null : Number(count);
    this.last = { command, rowCount: Number.isNaN(rowCount) ? null : rowCount, rows: [], fields: [] };
  }

  // The client calls this for the server's error (and stops routing to this query: the server skips
  // the rest up to the Sync) as for a lost connection, which no ReadyForQuery follows.
  handleError(error: Error): void {
    this.finish(error);
  }

  handleReadyForQuery(): void {
    this.finish();
  }

  // Carried statements return no rows the caller reads (pg_logical_emit_message's LSN is not needed).
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(connection: PgWire): void {
    connection.sendCopyFail('COPY is not carried with a COMMIT');
  }
  handleCopyData(): void {}

  private send(connection: PgWire, { text, values, name }: CarriedStatement): void {
    if (name === undefined) connection.parse({ text, name: '', types: [] });
    connection.bind({ portal: '', statement: name ?? '', values: [...values], valueMapper: this.valueMapper });
    connection.execute({ portal: '', rows: 0 });
  }

  private finish(error?: Error): void {
    const callback = this.callback;
    this.callback = undefined;
    if (error) callback?.(error);
    else callback?.(null, this.last);
  }
}
