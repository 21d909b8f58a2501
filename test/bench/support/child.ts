import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export interface WorkerMessage {
  type: string;
  [key: string]: unknown;
}

/**
 * A benchmark worker in a process of its own (child_process.fork of the compiled worker script),
 * talking over IPC. Every wait is bounded; `close()` asks it to stop and kills it if it does not.
 */
export class Worker {
  private readonly child: ChildProcess;
  private readonly inbox: WorkerMessage[] = [];
  private waiters: Array<() => void> = [];
  private exited = false;
  readonly exit: Promise<number | null>;
  readonly listeners: Array<(message: WorkerMessage) => void> = [];

  constructor(script: 'relay-worker' | 'consumer-worker', config: Record<string, unknown>, execArgv: string[] = []) {
    // BENCH_CPU_PROF=DIR: relay processes write a V8 CPU profile there (node --cpu-prof) when they exit.
    const profile = script === 'relay-worker' && process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
    this.child = fork(join(__dirname, '..', 'workers', `${script}.js`), [JSON.stringify(config)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [...execArgv, ...profile],
    });
    this.child.on('message', (message: WorkerMessage) => {
      for (const listener of this.listeners) listener(message);
      this.inbox.push(message);
      this.wake();
    });
    this.exit = new Promise((resolve) =>
      this.child.on('exit', (code) => {
        this.exited = true;
        this.wake();
        resolve(code);
      }),
    );
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  send(message: WorkerMessage): void {
    if (!this.exited) this.child.send(message);
  }

  /** The next message of this type (earlier ones of other types stay queued). */
  async next(type: string, timeoutMs: number): Promise<WorkerMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.inbox.findIndex((message) => message.type === type || message.type === 'error');
      if (index >= 0) {
        const [message] = this.inbox.splice(index, 1);
        if (message.type === 'error') throw new Error(`worker ${this.pid} failed: ${String(message.error)}`);
        return message;
      }
      if (this.exited) throw new Error(`worker ${this.pid} exited before sending "${type}"`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`worker ${this.pid} sent no "${type}" within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Ends the process at once (SIGKILL: no shutdown hook runs), as a crash would. */
  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }

  async request(message: WorkerMessage, reply: string, timeoutMs: number): Promise<WorkerMessage> {
    this.send(message);
    return this.next(reply, timeoutMs);
  }

  async close(timeoutMs = 15_000): Promise<void> {
    if (this.exited) return;
    this.send({ type: 'stop' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    await this.exit;
    clearTimeout(timer);
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((wake) => wake());
  }
}
