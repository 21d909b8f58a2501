import { BeforeApplicationShutdown, Injectable, Module, OnApplicationShutdown, type INestApplicationContext, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { enableBoundedShutdown } from './bounded-shutdown';
import { SHUTDOWN_STAGE } from './shutdown-stage';

// A signal nothing else in a jest worker listens to; process.emit runs the handlers without signalling the process.
const SIGNAL = 'SIGUSR2';

@Injectable()
class HangingBroker implements BeforeApplicationShutdown {
  stage: string | undefined;
  beforeApplicationShutdown(): Promise<void> {
    this.stage = 'waiting for the broker to say goodbye';
    return new Promise(() => undefined);
  }
  [SHUTDOWN_STAGE](): string | undefined {
    return this.stage;
  }
}

@Injectable()
class QuickPool implements OnApplicationShutdown {
  closed = false;
  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
  }
}

@Module({ providers: [HangingBroker] })
class HangingModule {}

@Module({ providers: [QuickPool] })
class QuickModule {}

function recordingLogger(): LoggerService & { lines: string[] } {
  const lines: string[] = [];
  const push = (message: unknown) => void lines.push(String(message));
  return { lines, log: push, error: push, warn: push };
}

describe('enableBoundedShutdown', () => {
  let app: INestApplicationContext;
  let remove: (() => void) | undefined;
  afterEach(() => remove?.());

  it('closes the app on the signal and exits with code 0', async () => {
    app = await NestFactory.createApplicationContext(QuickModule, { logger: false });
    const logger = recordingLogger();
    const exited = new Promise<number>((resolve) => (remove = enableBoundedShutdown(app, { signals: [SIGNAL], timeoutMs: 2_000, logger, exit: resolve })));
    process.emit(SIGNAL, SIGNAL);
    expect(await exited).toBe(0);
    expect(app.get(QuickPool).closed).toBe(true);
    expect(logger.lines.join('\n')).toMatch(/Closed in \d+ ms after SIGUSR2/);
  });

  it('exits with code 1 at the deadline, naming the hook still running and the stage it reported', async () => {
    app = await NestFactory.createApplicationContext(HangingModule, { logger: false });
    const logger = recordingLogger();
    const started = Date.now();
    const exited = new Promise<number>((resolve) => (remove = enableBoundedShutdown(app, { signals: [SIGNAL], timeoutMs: 300, logger, exit: resolve })));
    process.emit(SIGNAL, SIGNAL);
    expect(await exited).toBe(1);
    expect(Date.now() - started).toBeLessThan(2_000);
    const said = logger.lines.join('\n');
    expect(said).toContain('The close did not finish within 300 ms of SIGUSR2');
    expect(said).toContain('Gave up on: HangingModule › HangingBroker.beforeApplicationShutdown(): waiting for the broker to say goodbye (running 0.');
  });

  it('exits at once on a second signal while closing, naming what runs', async () => {
    app = await NestFactory.createApplicationContext(HangingModule, { logger: false });
    const logger = recordingLogger();
    const exits: number[] = [];
    remove = enableBoundedShutdown(app, { signals: [SIGNAL], timeoutMs: 60_000, logger, exit: (code) => void exits.push(code) });
    process.emit(SIGNAL, SIGNAL);
    await new Promise((resolve) => setTimeout(resolve, 20));
    process.emit(SIGNAL, SIGNAL);
    expect(exits).toEqual([1]);
    expect(logger.lines.join('\n')).toMatch(/SIGUSR2 received while closing after SIGUSR2; exiting with code 1\. Gave up on: HangingModule › HangingBroker/);
  });

  it('refuses a deadline that is not a positive integer, naming the option', () => {
    expect(() => enableBoundedShutdown({} as INestApplicationContext, { timeoutMs: 0 })).toThrow(/"timeoutMs" must be a positive integer/);
  });
});
