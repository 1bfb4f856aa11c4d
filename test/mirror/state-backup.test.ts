/**
 * `orgsync state backup` and `orgsync state restore` end to end (issue 15, point 1): a backup taken while the daemon
 * holds the state DB, a restore refused while it runs (the holder named) and for files that are not a usable state DB,
 * and a restore after the state DB was lost that brings member ownership back, so the next sync applies an HR change.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { daemonMain } from '../../src/cli/commands/daemon.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { migrations } from '../../src/mirror/migrations/index.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { DEMO_KEY, demoSeed, demoWorkspace, getJson, until, type StatusRun } from '../daemon/support.js';
import { captureContext, cli } from '../helpers/cli.js';

const LATEST = Math.max(...migrations.map((m) => m.version));
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The platform's member with this third id (walking the list pages). */
async function platformMember(thirdId: string, emulator = current.emulator): Promise<{ title: string } | undefined> {
  let cursor = '';
  for (;;) {
    const page = await emulator!.request('GET', `/api/external/v1/org/members?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: DEMO_KEY });
    const data = (page.body.data ?? page.body) as { items: { third_user_id: string; title: string }[]; next_cursor: string; has_more: boolean };
    const hit = data.items.find((m) => m.third_user_id === thirdId);
    if (hit) return hit;
    if (!data.has_more) return undefined;
    cursor = data.next_cursor;
  }
}
const current: { emulator?: TestEmulator } = {};

function ownedCount(file: string): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT count(*) FROM owned_members').pluck().get() as number;
  } finally {
    db.close();
  }
}

describe('orgsync state backup / restore while a daemon holds the state DB', { timeout: 180_000 }, () => {
  let emulator: TestEmulator;
  let dir: string;
  let cfg: string;
  let dbPath: string;
  let url = '';
  let liveOwned = 0;
  const scheduler = new ManualScheduler(30 * 60_000);
  const daemon = captureContext();
  let exit: Promise<number> | undefined;

  beforeAll(async () => {
    emulator = await startTestEmulator(demoSeed());
    current.emulator = emulator;
    dir = demoWorkspace({ url: emulator.url });
    cfg = join(dir, 'orgsync.yaml');
    dbPath = join(dir, 'state/orgsync.db');
    const config = loadConfig(cfg, {});
    exit = daemonMain(config, daemon.ctx, config.metrics.listen, { scheduler, onListening: (u) => (url = u) });
    await until('the first daemon run', async () => {
      if (!url) return undefined;
      const runs = (await getJson(`${url}/status`)).body.runs as StatusRun[];
      return runs.length === 1 && runs[0]!.result === 'success' ? true : undefined;
    });
    liveOwned = ownedCount(dbPath);
  }, 180_000);

  afterAll(async () => {
    daemon.shutdown.abort(new Error('test over'));
    await exit;
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('backs up a consistent, self-contained copy while the daemon holds the lease', async () => {
    expect(liveOwned).toBeGreaterThan(300);
    const file = join(dir, 'backup.db');
    const r = await cli('state', 'backup', join(dir, 'backup.db'), '--config', cfg);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Backed up ${esc(dbPath)} to ${esc(file)} \\(schema version ${LATEST}, ${liveOwned} owned members, 1 recorded run, sync id daemon-e2e; \\d+ bytes\\)\\.\\n$`));
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(existsSync(`${file}.tmp-${process.pid}`)).toBe(false);
    const copy = new Database(file, { readonly: true, fileMustExist: true });
    try {
      expect(copy.pragma('quick_check', { simple: true })).toBe('ok');
      expect(copy.pragma('user_version', { simple: true })).toBe(LATEST);
      expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
      expect(copy.prepare('SELECT count(*) FROM owned_members').pluck().get()).toBe(liveOwned);
      // The lease describes the process that held the DB, not the state: the copy carries none.
      expect(copy.prepare('SELECT count(*) FROM lease').pluck().get()).toBe(0);
    } finally {
      copy.close();
    }
  });

  it('refuses a restore while the daemon holds the lease, naming it, and leaves the state DB as it was', async () => {
    const r = await cli('state', 'restore', join(dir, 'backup.db'), '--config', cfg);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      new RegExp(
        `^orgsync: state restore refused: state DB ${esc(dbPath)} is in use by another orgsync process \\(pid ${process.pid} on ${esc(hostname())}, since [0-9T:.Z-]+\\); only one process may sync a mirror at a time; stop that process first \\(scale the Deployment to 0 or wait for the CronJob run to end\\), then restore\\n$`,
      ),
    );
    expect(ownedCount(dbPath)).toBe(liveOwned);
    // The daemon still holds its lease and keeps running.
    expect(scheduler.tick()).toBe(true);
    await until('the scheduled run', async () => {
      const runs = (await getJson(`${url}/status`)).body.runs as StatusRun[];
      return runs.length === 2 && runs[0]!.result === 'success' ? true : undefined;
    });
  });

  it('refuses files that are not a usable orgsync state DB of this sync (exit 2), before touching the state DB', async () => {
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'not a database at all, just some words that are long enough to fill a header page of sqlite.\n'.repeat(20));
    let r = await cli('state', 'restore', text, '--config', cfg);
    expect([r.code, r.stderr]).toEqual([2, `orgsync: ${text} is not a usable orgsync state DB: file is not a database\n`]);

    const other = join(dir, 'other.db');
    const o = new Database(other);
    o.exec('CREATE TABLE t (x)');
    o.close();
    r = await cli('state', 'restore', other, '--config', cfg);
    expect([r.code, r.stderr]).toEqual([2, `orgsync: ${other} is not a usable orgsync state DB: it has no orgsync schema version (PRAGMA user_version is 0)\n`]);

    const future = join(dir, 'future.db');
    writeFileSync(future, readFileSync(join(dir, 'backup.db')));
    let f = new Database(future);
    f.pragma(`user_version = ${LATEST + 7}`);
    f.close();
    r = await cli('state', 'restore', future, '--config', cfg);
    expect([r.code, r.stderr]).toEqual([2, `orgsync: ${future} is not a usable orgsync state DB: its schema version ${LATEST + 7} is newer than this orgsync knows (${LATEST}); restore it with a newer orgsync\n`]);

    const gutted = join(dir, 'gutted.db');
    writeFileSync(gutted, readFileSync(join(dir, 'backup.db')));
    f = new Database(gutted);
    f.exec('DROP TABLE runs');
    f.close();
    r = await cli('state', 'restore', gutted, '--config', cfg);
    expect([r.code, r.stderr]).toEqual([2, `orgsync: ${gutted} is not a usable orgsync state DB: schema version ${LATEST} but table runs missing\n`]);

    const foreign = join(dir, 'foreign.db');
    writeFileSync(foreign, readFileSync(join(dir, 'backup.db')));
    f = new Database(foreign);
    f.exec("UPDATE owned_members SET sync_id = 'payroll'; UPDATE source_snapshots SET sync_id = 'payroll'; UPDATE scope_fingerprints SET sync_id = 'payroll'");
    f.close();
    r = await cli('state', 'restore', foreign, '--config', cfg);
    expect([r.code, r.stderr]).toEqual([2, `orgsync: ${foreign} holds the state of sync id "payroll", not of "daemon-e2e" (sync.id of this config); restore a backup of this sync\n`]);

    r = await cli('state', 'restore', join(dir, 'missing.db'), '--config', cfg);
    expect([r.code, r.stderr]).toEqual([2, `orgsync: ${join(dir, 'missing.db')}: no such file\n`]);
    expect(ownedCount(dbPath)).toBe(liveOwned);
  });

  it('after the state DB is lost, a restore brings ownership back and the next sync applies an HR change', async () => {
    daemon.shutdown.abort(new Error('stop for the restore'));
    expect(await exit).toBe(0);
    exit = undefined;
    for (const f of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) rmSync(f, { force: true });

    const csv = join(dir, 'members.csv');
    writeFileSync(csv, readFileSync(csv, 'utf8').replace('E1002,Lars,Okafor,lars.okafor@demo-corp.test,,Chief Executive Officer', 'E1002,Lars,Okafor,lars.okafor@demo-corp.test,,Chief Executive Officer and Founder'));

    const backup = join(dir, 'backup.db');
    let r = await cli('state', 'restore', backup, '--config', cfg);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // Nothing worth keeping was replaced (the state DB was gone), so no .before-restore copy.
    expect(r.stdout).toBe(`Restored ${backup} into ${dbPath} (schema version ${LATEST}, ${liveOwned} owned members, 1 recorded run, sync id daemon-e2e).\n`);
    expect(existsSync(`${dbPath}.before-restore`)).toBe(false);
    expect(ownedCount(dbPath)).toBe(liveOwned);

    r = await cli('sync', '--config', cfg);
    expect(r.code).toBe(0);
    expect((await platformMember('E1002'))?.title).toBe('Chief Executive Officer and Founder');

    // Restoring over a state DB that holds something keeps that state beside it.
    r = await cli('state', 'restore', backup, '--config', cfg);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`The state it replaced was saved to ${dbPath}.before-restore.\n`);
    expect(ownedCount(`${dbPath}.before-restore`)).toBe(liveOwned);
  });
});
