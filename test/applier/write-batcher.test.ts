import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { WriteBatcher } from '../../src/applier/write-batcher.js';

let db: Database.Database | undefined;
afterEach(() => db?.close());

describe('WriteBatcher', () => {
  it('commits the writes queued in one turn in one transaction and resolves after the commit', async () => {
    db = new Database(':memory:');
    db.exec('CREATE TABLE t (v INTEGER)');
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    let commits = 0;
    const batcher = new WriteBatcher((fn) => {
      db!.transaction(fn)();
      commits += 1;
    });
    await Promise.all([1, 2, 3].map((v) => batcher.write(() => insert.run(v))));
    expect(commits).toBe(1);
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(3);
  });

  it('holds lazy writes for company until flushed, and one failing write does not undo the others', async () => {
    db = new Database(':memory:');
    db.exec('CREATE TABLE t (v INTEGER NOT NULL)');
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const batcher = new WriteBatcher((fn) => db!.transaction(fn)(), { lazyMs: 60_000 });
    const ok = batcher.write(() => insert.run(1), { lazy: true });
    const bad = batcher.write(() => insert.run(null), { lazy: true });
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(0);
    await batcher.flush();
    await ok;
    await expect(bad).rejects.toThrow(/NOT NULL/);
    expect(db.prepare('SELECT v FROM t').pluck().all()).toEqual([1]);
  });
});
