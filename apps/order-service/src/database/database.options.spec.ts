import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { databaseOptions } from './database.options';

describe('the demo’s SQLite options', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'demo-sqlite-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const prepare = (file: string) => {
    const options = databaseOptions({ type: 'better-sqlite3', database: file }) as { prepareDatabase?: (db: Database.Database) => Promise<void> };
    if (!options.prepareDatabase) throw new Error('the SQLite options have no prepareDatabase');
    return options.prepareDatabase;
  };

  it('switches a new file to WAL once another instance’s lock on it is gone, where SQLite answered SQLITE_BUSY at once', async () => {
    const file = join(dir, 'demo.sqlite');
    const other = new Database(file);
    other.exec('CREATE TABLE t (n integer)');
    other.exec('BEGIN EXCLUSIVE');
    // No busy timeout: the switch fails at once while the other connection holds the file.
    const starting = new Database(file, { timeout: 0 });
    expect(() => starting.pragma('journal_mode = WAL')).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }));

    const switched = prepare(file)(starting);
    setTimeout(() => other.exec('ROLLBACK'), 100);
    await switched;
    expect(starting.pragma('journal_mode', { simple: true })).toBe('wal');
    starting.close();
    other.close();
  });

  it('fails at once on any other error', async () => {
    let tries = 0;
    const failing = {
      pragma: () => {
        tries++;
        throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
      },
    };
    await expect(prepare(join(dir, 'other.sqlite'))(failing as never)).rejects.toThrow('disk I/O error');
    expect(tries).toBe(1);
  });
});
