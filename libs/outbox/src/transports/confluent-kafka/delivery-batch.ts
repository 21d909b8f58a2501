const UNSETTLED = Symbol('unsettled');

/**
 * The outcomes of one `publishBatch` call, filled in as librdkafka's delivery reports arrive (one
 * per message, in any order across partitions). Resolves once every message has its outcome:
 * `undefined` when the broker acknowledged it, else the error. A message settles once; a late
 * report for it (after `failUnsettled` on close) is ignored.
 */
export class DeliveryBatch {
  readonly outcomes: Promise<Array<Error | undefined>>;
  private readonly results: Array<Error | undefined | typeof UNSETTLED>;
  private unsettled: number;
  private resolve!: (outcomes: Array<Error | undefined>) => void;

  constructor(size: number) {
    this.results = new Array<Error | undefined | typeof UNSETTLED>(size).fill(UNSETTLED);
    this.unsettled = size;
    this.outcomes = new Promise((resolve) => (this.resolve = resolve));
    if (size === 0) this.resolve([]);
  }

  settle(index: number, error?: Error): void {
    if (this.results[index] !== UNSETTLED) return;
    this.results[index] = error;
    if (--this.unsettled === 0) this.resolve(this.results as Array<Error | undefined>);
  }

  /** Fails every message from `index` on that was never handed to librdkafka. */
  failFrom(index: number, error: Error): void {
    for (let next = index; next < this.results.length; next++) this.settle(next, error);
  }

  /** Fails what has no outcome yet: the transport closed, or the producer was replaced. */
  failUnsettled(error: Error): void {
    this.failFrom(0, error);
  }
}
