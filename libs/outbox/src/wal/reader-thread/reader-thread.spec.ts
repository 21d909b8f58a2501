import { EventEmitter } from 'node:events';
import { MessageChannel } from 'node:worker_threads';
import type { StreamCommit } from '../../core/stream/stream-message';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import type { PgoutputReaderConfig } from '../pgoutput.reader';
import type { WalReader } from '../wal-reader.port';
import { ReaderThreadHost } from './reader-thread.host';
import type { ReaderThreadInit } from './reader-thread.protocol';
import { checkReaderThreadConnection, checkReaderThreadEntry, ThreadedWalReader, type ReaderThread } from './threaded-wal.reader';

/** The slot's reader on the far side, driven by the test: what it was given and told. */
class ScriptedReader implements WalReader {
  started: bigint | undefined | 'not yet' = 'not yet';
  confirmed: bigint[] = [];
  refuseConfirm: string | undefined;
  stopped = false;
  constructor(readonly config: PgoutputReaderConfig) {}
  async start(from?: bigint): Promise<void> {
    this.started = from;
  }
  async confirm(lsn: bigint): Promise<void> {
    if (this.refuseConfirm) throw new Error(this.refuseConfirm);
    this.confirmed.push(lsn);
  }
  async stop(): Promise<void> {
    this.stopped = true;
  }
}

/**
 * Both ends over a real MessageChannel (structured clone and all), without the worker thread: the
 * host's side runs the scripted reader, the app's side is the ThreadedWalReader under test.
 */
function overChannel(window: number) {
  const taken: StreamCommit[] = [];
  const ends: Error[] = [];
  const caughtUpAsked: bigint[] = [];
  let init: ReaderThreadInit | undefined;
  let reader: ScriptedReader | undefined;
  let takeCommit: (commit: StreamCommit) => Promise<void> = async (commit) => void taken.push(commit);
  const { port1, port2 } = new MessageChannel();
  const spawn = (given: ReaderThreadInit): ReaderThread => {
    init = given;
    const host = new ReaderThreadHost(port2, given, (config) => (reader = new ScriptedReader(config)));
    port2.on('message', (message) => host.receive(message));
    host.start();
    const exits = new EventEmitter();
    return {
      postMessage: (message) => port1.postMessage(message),
      on: (event: string, listener: (value: unknown) => void) => (event === 'message' ? port1.on('message', listener) : exits.on(event, listener)),
      terminate: async () => (port1.close(), port2.close(), exits.emit('exit', 1), 1),
    } as ReaderThread;
  };
  const threaded = new ThreadedWalReader(
    {
      slotName: 's',
      publicationName: 's',
      prefix: 'outbox',
      connection: { host: 'db', password: () => 'from a function' },
      onCommit: (commit) => takeCommit(commit),
      onCaughtUp: async (lsn) => (caughtUpAsked.push(lsn), true),
      onEnd: (error) => void ends.push(error),
    },
    window,
    spawn,
  );
  return {
    threaded,
    taken,
    ends,
    caughtUpAsked,
    get init() {
      return init!;
    },
    get reader() {
      return reader!;
    },
    holdCommits(): () => void {
      const held: Array<() => void> = [];
      takeCommit = (commit) => new Promise<void>((resolve) => held.push(() => (taken.push(commit), resolve())));
      return () => held.splice(0).forEach((release) => release());
    },
    close: () => (port1.close(), port2.close()),
  };
}

const commit = (lsn: bigint, ids: string[]): StreamCommit => ({
  lsn,
  xid: 7,
  messages: ids.map((id, index) => ({ id, type: 't', version: 1, aggregateType: 'a', aggregateId: id, transport: 'default', destination: 'd', occurredAt: 'x', headers: {}, payloadJson: '{}', commit: lsn, index, row: { position: String(lsn), xid: 7 } })),
});

const until = async (what: string, condition: () => boolean): Promise<void> => {
  const deadline = Date.now() + 2_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
};

describe('the WAL reader on a worker thread (wal.readerThread: "worker"), over a real MessageChannel', () => {
  it('starts the reader where asked, its password function called on the app’s side', async () => {
    const side = overChannel(10);
    await side.threaded.start(42n);
    await until('the reader to start', () => side.reader?.started === 42n);
    expect(side.init.reader.connection.password).toBe('from a function');
    await side.threaded.stop();
    expect(side.reader.stopped).toBe(true);
  });

  it('hands commits over in stream order, positions and rows intact', async () => {
    const side = overChannel(100);
    await side.threaded.start();
    await until('the reader', () => side.reader !== undefined);
    for (const lsn of [10n, 20n, 30n]) await side.reader.config.onCommit(commit(lsn, [`m${lsn}`]));
    await side.reader.config.onCommit(commit(40n, []));
    await until('four commits taken', () => side.taken.length === 4);
    expect(side.taken.map((c) => c.lsn)).toEqual([10n, 20n, 30n, 40n]);
    expect(side.taken[1]).toEqual(commit(20n, ['m20']));
    await side.threaded.stop();
  });

  it('holds the reader once a window of messages waits on the app’s side, and lets it on as they are taken', async () => {
    const side = overChannel(3);
    const release = side.holdCommits();
    await side.threaded.start();
    await until('the reader', () => side.reader !== undefined);
    await side.reader.config.onCommit(commit(10n, ['a']));
    await side.reader.config.onCommit(commit(20n, ['b']));
    let third = false;
    const handedThird = side.reader.config.onCommit(commit(30n, ['c'])).then(() => (third = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(third).toBe(false);
    release();
    await until('the first commit taken', () => side.taken.length >= 1);
    // Each commit waits for the one before it, as the main-thread reader hands them over.
    await until('all taken', () => (release(), side.taken.length === 3));
    await handedThird;
    expect(third).toBe(true);
    await side.threaded.stop();
  });

  it('asks about a keepalive’s position only once the commits sent before it are taken', async () => {
    const side = overChannel(100);
    const release = side.holdCommits();
    await side.threaded.start();
    await until('the reader', () => side.reader !== undefined);
    await side.reader.config.onCommit(commit(10n, ['a']));
    const answer = side.reader.config.onCaughtUp(99n);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(side.caughtUpAsked).toEqual([]);
    release();
    await expect(answer).resolves.toBe(true);
    expect(side.taken.map((c) => c.lsn)).toEqual([10n]);
    expect(side.caughtUpAsked).toEqual([99n]);
    await side.threaded.stop();
  });

  it('confirms through the reader, and a refused confirmation comes back with its text', async () => {
    const side = overChannel(100);
    await side.threaded.start();
    await until('the reader', () => side.reader !== undefined);
    await side.threaded.confirm(55n);
    expect(side.reader.confirmed).toEqual([55n]);
    side.reader.refuseConfirm = 'the connection is gone';
    await expect(side.threaded.confirm(66n)).rejects.toThrow('the connection is gone');
    await side.threaded.stop();
  });

  it('reports the reader’s end once, with its text, and confirms nothing after it', async () => {
    const side = overChannel(100);
    await side.threaded.start();
    await until('the reader', () => side.reader !== undefined);
    side.reader.config.onEnd(new Error('replication slot "s" is active for PID 12'));
    side.reader.config.onEnd(new Error('a second report'));
    await until('the end reported', () => side.ends.length === 1);
    expect(side.ends[0].message).toBe('replication slot "s" is active for PID 12');
    await side.threaded.confirm(77n);
    expect(side.reader.confirmed).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(side.ends).toHaveLength(1);
    side.close();
  });

  it('refuses at bootstrap a build without the thread’s entry, naming the file and what to do', () => {
    expect(() => checkReaderThreadEntry()).not.toThrow();
    expect(() => checkReaderThreadEntry('/nowhere/pgoutput.worker.js')).toThrow(/"wal.readerThread" is 'worker', and the reader thread's entry \/nowhere\/pgoutput.worker.js is not there.*externals/);
  });

  it('refuses at bootstrap a connection setting that cannot cross to another thread, naming it', () => {
    expect(() => checkReaderThreadConnection({ host: 'db', ssl: { checkServerIdentity: () => undefined } })).toThrow(OutboxConfigurationError);
    expect(() => checkReaderThreadConnection({ host: 'db', ssl: { checkServerIdentity: () => undefined } })).toThrow(/"wal.readerThread" is 'worker'.*setting "ssl"/);
    expect(() => checkReaderThreadConnection({ host: 'db', password: () => 'p', ssl: { ca: Buffer.from('x'), rejectUnauthorized: true } })).not.toThrow();
  });
});
