import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { OutboxModuleOptions } from '@nest-outbox/outbox';
import type { WalSandbox } from './wal.harness';

/** A message as the child instance reports it. */
export interface ChildPublished {
  id: string;
  key: string;
  seq: number;
}

export interface WalChild {
  child: ChildProcess;
  published: ChildPublished[];
  /** Worker threads the instance started, by thread id. */
  workers: number[];
  ready: Promise<void>;
  /** Closes the app (the child exits 0 once it has); resolves with the exit code. */
  close(): Promise<number | null>;
  /** SIGKILLs it, unless it has exited already. */
  kill(): Promise<void>;
}

/** A WAL-mode instance in a child process (test/wal/wal-instance.child.ts), so that it can be SIGKILLed; collects what it reports. */
export function startWalChild(sandbox: WalSandbox, wal: OutboxModuleOptions['wal'] = {}): WalChild {
  const published: ChildPublished[] = [];
  const workers: number[] = [];
  const child = fork(join(__dirname, '..', 'wal', 'wal-instance.child.ts'), [], {
    execArgv: ['-r', join(__dirname, 'ts-child.register.cjs')],
    env: { ...process.env, WAL_CHILD: JSON.stringify({ url: sandbox.url, schema: sandbox.schema, slotName: sandbox.slotName, wal }) },
    stdio: ['ignore', process.env.WAL_CHILD_LOG ? 'inherit' : 'ignore', 'inherit', 'ipc'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (message: { t: string; text?: string; threadId?: number } & ChildPublished) => {
      if (message.t === 'ready') resolve();
      else if (message.t === 'failed') reject(new Error(`the child instance failed to start: ${message.text}`));
      else if (message.t === 'published') published.push({ id: message.id, key: message.key, seq: message.seq });
      else if (message.t === 'worker') workers.push(message.threadId!);
    });
    void exited.then((code) => reject(new Error(`the child instance exited (${code}) before it was ready`)));
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    published,
    workers,
    ready,
    close: async () => {
      if (running()) child.send('close');
      return exited;
    },
    kill: async () => {
      if (running()) child.kill('SIGKILL');
      await exited;
    },
  };
}
