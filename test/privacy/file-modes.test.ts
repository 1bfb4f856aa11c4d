/**
 * Issue 29 point 2: under `umask 022` (files 0644 by default) the state DB with its -wal and -shm, the folder orgsync
 * creates for it, a backup, a saved plan (`plan --out`) and an HTML report (`plan --output html --out`) are created
 * owner-only; a state DB that others can read gets a warning naming it and the chmod to run. Child processes, since
 * a test worker cannot change its umask.
 */
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt, repoRoot } from '../helpers/build.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { demoSeed, demoWorkspace } from '../daemon/support.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** Runs `orgsync ARGS` under umask 022 (asynchronously: the emulator answers from this process). */
function cli022(args: string[], cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('sh', ['-c', 'umask 022 && exec "$0" "$@"', process.execPath, CLI, ...args], { cwd, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
  });
}

describe('private files under umask 022', { timeout: 180_000 }, () => {
  let emulator: TestEmulator;
  let dir: string;
  beforeAll(async () => {
    ensureBuilt();
    emulator = await startTestEmulator(demoSeed());
    dir = demoWorkspace({ url: emulator.url });
  }, 120_000);
  afterAll(async () => {
    await emulator?.close();
  });

  it('the umask of the child really is 022: a plain file it creates is 0644', () => {
    const r = spawnSync('sh', ['-c', 'umask 022 && : > plain.txt'], { cwd: dir });
    expect(r.status).toBe(0);
    expect(mode(join(dir, 'plain.txt'))).toBe('644');
  });

  it('the state DB, its -wal and -shm (while open) and its new folder are owner-only', () => {
    // A process holding the DB open, as a daemon does: SQLite's -wal and -shm exist only while a connection is open.
    const script = `
      const { openStateDb } = await import(${JSON.stringify(join(repoRoot, 'dist/mirror/db.js'))});
      const { statSync } = await import('node:fs');
      const path = ${JSON.stringify(join(dir, 'fresh', 'sub', 'orgsync.db'))};
      const db = openStateDb(path, { busyTimeoutMs: ${TEST_BUSY_TIMEOUT_MS} });
      db.prepare('CREATE TABLE probe (x)').run();
      const m = (p) => (statSync(p).mode & 0o777).toString(8);
      console.log(JSON.stringify({ db: m(path), wal: m(path + '-wal'), shm: m(path + '-shm'), dir: m(${JSON.stringify(join(dir, 'fresh'))}), sub: m(${JSON.stringify(join(dir, 'fresh', 'sub'))}) }));
      db.close();`;
    const r = spawnSync('sh', ['-c', 'umask 022 && exec "$0" --input-type=module -e "$1"', process.execPath, script], { cwd: dir, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ db: '600', wal: '600', shm: '600', dir: '700', sub: '700' });
  });

  it('sync, state backup, plan --out and plan --output html --out write owner-only files', async () => {
    const sync = await cli022(['sync', '--config', 'orgsync.yaml'], dir);
    expect(sync.status).toBe(0);
    expect(mode(join(dir, 'state'))).toBe('700');
    expect(mode(join(dir, 'state', 'orgsync.db'))).toBe('600');
    expect((await cli022(['state', 'backup', 'backup.db', '--config', 'orgsync.yaml'], dir)).status).toBe(0);
    expect(mode(join(dir, 'backup.db'))).toBe('600');
    expect((await cli022(['plan', '--config', 'orgsync.yaml', '--out', 'saved-plan.json'], dir)).status).toBe(0);
    expect(mode(join(dir, 'saved-plan.json'))).toBe('600');
    expect((await cli022(['plan', '--config', 'orgsync.yaml', '--output', 'html', '--out', 'report.html'], dir)).status).toBe(0);
    expect(mode(join(dir, 'report.html'))).toBe('600');
  });

  it('a state DB readable by others gets a warning naming it and the chmod to run', async () => {
    const db = join(dir, 'state', 'orgsync.db');
    chmodSync(db, 0o644);
    const r = await cli022(['sync', '--config', 'orgsync.yaml'], dir);
    expect(r.status).toBe(0);
    // `sync` logs on stderr (stdout carries its summary).
    const warnings = r.stderr.split('\n').filter((l) => l.includes('"state_db"') && l.includes('"level":"warn"')).map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(warnings).toEqual([`the state DB ${db} is readable by its group and other users (mode 644); it holds personal data: run chmod 600 ${db}`]);
    chmodSync(db, 0o600);
    const again = await cli022(['sync', '--config', 'orgsync.yaml'], dir);
    expect(again.status).toBe(0);
    expect(again.stderr).not.toContain('chmod 600');
  });
});
