import { readdirSync, readFileSync } from 'node:fs';
import { Client } from 'pg';

// Linux reports process CPU time in clock ticks; USER_HZ is 100 on every mainstream kernel build.
const TICKS_PER_SECOND = 100;

function statFields(pid: string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may contain spaces: split after it.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * CPU time used by one PostgreSQL server: its postmaster and every process it started (backends,
 * WAL writer, checkpointer…), read from /proc.
 */
export class ServerCpu {
  private constructor(private readonly postmaster: string) {}

  /** Finds the server through one of its backends. Undefined where /proc is not readable. */
  static async of(client: Client): Promise<ServerCpu | undefined> {
    const backend = String((await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
    const fields = statFields(backend);
    // After the command name: state (0), ppid (1).
    return fields ? new ServerCpu(fields[1]) : undefined;
  }

  /** CPU ticks so far of the postmaster and each of its children, by pid. */
  snapshot(): Map<string, number> {
    const ticks = new Map<string, number>();
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const fields = statFields(pid);
      if (!fields || (pid !== this.postmaster && fields[1] !== this.postmaster)) continue;
      // utime and stime are fields 14 and 15 of /proc/PID/stat, i.e. 11 and 12 after the name.
      ticks.set(pid, Number(fields[11]) + Number(fields[12]));
    }
    return ticks;
  }

  /**
   * Milliseconds of CPU (user + system) used since `before` by the server's processes alive now;
   * a process that ended in between (an autovacuum worker, say) is missing from it.
   */
  millisecondsSince(before: Map<string, number>): number {
    let ticks = 0;
    for (const [pid, now] of this.snapshot()) ticks += now - (before.get(pid) ?? 0);
    return (ticks * 1000) / TICKS_PER_SECOND;
  }
}

/** Milliseconds of CPU (user + system) another process has used so far (a worker, by pid); NaN if unreadable. */
export function pidCpuMs(pid: number): number {
  const fields = statFields(String(pid));
  return fields ? ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND : Number.NaN;
}

/** Milliseconds of CPU (user + system) this process has used. */
export function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Samples what PostgreSQL's client backends of this database are doing (pg_stat_activity state and
 * wait event) while a phase runs, from a connection of its own (excluded from the samples).
 */
export class WaitSampler {
  static readonly EVERY_MS = 20;
  private readonly counts = new Map<string, Map<string, number>>();
  private running: { label: string; loop: Promise<void>; stop: boolean } | undefined;

  private constructor(private readonly client: Client) {}

  static async connect(url: string): Promise<WaitSampler> {
    const client = new Client({ connectionString: url });
    await client.connect();
    return new WaitSampler(client);
  }

  start(label: string): void {
    const state = { label, stop: false, loop: Promise.resolve() };
    const counts = this.counts.get(label) ?? new Map<string, number>();
    this.counts.set(label, counts);
    state.loop = (async () => {
      while (!state.stop) {
        const { rows } = await this.client.query(
          `SELECT CASE WHEN state = 'active' THEN coalesce(wait_event_type || ':' || wait_event, 'CPU') ELSE state END AS what
           FROM pg_stat_activity
           WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND state <> 'idle'`,
        );
        for (const row of rows) counts.set(String(row.what), (counts.get(String(row.what)) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, WaitSampler.EVERY_MS));
      }
    })();
    this.running = state;
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running.stop = true;
    await this.running.loop;
    this.running = undefined;
  }

  /** The most frequent states, as shares of all samples of non-idle backends. */
  describe(label: string, top = 4): string {
    const counts = [...(this.counts.get(label) ?? new Map<string, number>())].sort((a, b) => b[1] - a[1]);
    const total = counts.reduce((sum, [, count]) => sum + count, 0);
    if (total === 0) return 'no samples';
    return counts
      .slice(0, top)
      .map(([what, count]) => `${what} ${Math.round((100 * count) / total)} %`)
      .join(', ');
  }

  async close(): Promise<void> {
    await this.stop();
    await this.client.end();
  }
}
