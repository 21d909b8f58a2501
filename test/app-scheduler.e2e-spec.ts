import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { Cron, Interval, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { OutboxModule, type OutboxTransport } from '@nest-outbox/outbox';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { waitFor } from './support/wait-for';
import { parcelsOnSqlite } from './support/sqlite-parcels';

const TICK_MS = 100;

/** The app's own jobs; a second scheduler in the app would run each of them twice per period. */
@Injectable()
class AppJobs {
  readonly ticks: number[] = [];
  readonly cronSeconds: number[] = [];

  @Interval('app-tick', TICK_MS)
  tick(): void {
    this.ticks.push(Date.now());
  }

  @Cron('* * * * * *', { name: 'app-cron' })
  everySecond(): void {
    this.cronSeconds.push(Math.floor(Date.now() / 1000));
  }
}

class ListTransport implements OutboxTransport {
  readonly name = 'list';
  readonly delivered: OutgoingMessage[] = [];
  async publish(message: OutgoingMessage): Promise<void> {
    this.delivered.push(message);
  }
}

describe("The app's own @nestjs/schedule jobs with OutboxModule imported (SQLite)", () => {
  let dir: string;
  let module: TestingModule;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outbox-schedule-'));
    module = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        parcelsOnSqlite(dir),
        // A short poll interval so the relay's own timer fires many times during the test.
        OutboxModule.forRoot({ transport: new ListTransport(), pollIntervalMs: 50 }),
      ],
      providers: [AppJobs],
    }).compile();
    module.useLogger(false);
    await module.init();
  });

  afterAll(async () => {
    await module?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves the app one scheduler, holding only the jobs the app declared', () => {
    const registry = module.get(SchedulerRegistry);
    expect(registry.getIntervals()).toEqual(['app-tick']);
    expect([...registry.getCronJobs().keys()]).toEqual(['app-cron']);
  });

  it('runs the app @Interval once per period and the app @Cron once per second', async () => {
    const jobs = module.get(AppJobs);
    await waitFor('ten app ticks and three cron runs', () => jobs.ticks.length >= 10 && jobs.cronSeconds.length >= 3, 20_000);
    // A doubled interval fires twice per period (gaps near 0 ms); a timer running late only widens gaps.
    const gaps = jobs.ticks.slice(1).map((at, index) => at - jobs.ticks[index]);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(TICK_MS / 2);
    // A doubled cron job runs twice in the same second.
    expect(new Set(jobs.cronSeconds).size).toBe(jobs.cronSeconds.length);
  });
});
