/**
 * Issue 15, point 8: read-only commands work while a daemon holds the state DB's lease. `plan` (without --out),
 * `explain` and `mirror status` read a snapshot of the state DB, refresh into memory only, never write the state DB,
 * and say in one line that they ran without the lease; `sources check` does not open the state DB at all.
 * `plan --out` and `sync` still need the lease.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { daemonMain } from '../../src/cli/commands/daemon.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { demoSeed, demoWorkspace, getJson, until, type StatusRun } from './support.js';
import { captureContext, cli } from '../helpers/cli.js';

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What a refresh of the state DB itself would change: the mirror's walk bookkeeping. */
function mirrorState(file: string): unknown {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT * FROM mirror_sync_state ORDER BY entity').all();
  } finally {
    db.close();
  }
}

describe('read-only commands while the daemon holds the lease', { timeout: 180_000 }, () => {
  let emulator: TestEmulator;
  let dir: string;
  let cfg: string;
  let dbPath: string;
  let url = '';
  const scheduler = new ManualScheduler(30 * 60_000);
  const daemon = captureContext();
  let exit: Promise<number> | undefined;

  beforeAll(async () => {
    emulator = await startTestEmulator(demoSeed());
    dir = demoWorkspace({ url: emulator.url, logLevel: 'warn' });
    cfg = join(dir, 'orgsync.yaml');
    dbPath = join(dir, 'state/orgsync.db');
    const config = loadConfig(cfg, {});
    exit = daemonMain(config, daemon.ctx, config.metrics.listen, { scheduler, onListening: (u) => (url = u) });
    await until('the first daemon run', async () => {
      if (!url) return undefined;
      const runs = (await getJson(`${url}/status`)).body.runs as StatusRun[];
      return runs.length === 1 && runs[0]!.result === 'success' ? true : undefined;
    });
    // An HR change the daemon has not run for yet: what plan and explain must show.
    const csv = join(dir, 'members.csv');
    writeFileSync(csv, readFileSync(csv, 'utf8').replace('E1002,Lars,Okafor,lars.okafor@demo-corp.test,,Chief Executive Officer', 'E1002,Lars,Okafor,lars.okafor@demo-corp.test,,Chief Executive Officer and Founder'));
  }, 180_000);

  afterAll(async () => {
    daemon.shutdown.abort(new Error('test over'));
    await exit;
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The one line a read-only command prints while the daemon (this test process) holds the lease. */
  const noteOf = (cmd: string) =>
    new RegExp(`^orgsync: ${cmd} ran without the lease \\(state DB ${esc(dbPath)} is held by pid ${process.pid} on ${esc(hostname())} since [0-9T:.Z-]+\\): it read a snapshot of the state DB and wrote nothing to it$`, 'm');

  it('plan shows the pending change, says it ran without the lease, and leaves the state DB as it was', async () => {
    const before = mirrorState(dbPath);
    const r = await cli('plan', '--config', cfg, '--output', 'json', '--detailed-exitcode');
    expect(r.code).toBe(5);
    // The one line, and nothing else (log.level warn).
    expect(r.stderr).toMatch(noteOf('plan'));
    expect(r.stderr.split('\n')).toHaveLength(2);
    const doc = JSON.parse(r.stdout) as { changes: { id: string; description: string }[] };
    expect(doc.changes.map((c) => c.id)).toEqual(['members:update:E1002']);
    // The refresh happened in memory only: the state DB's walk bookkeeping did not move.
    expect(mirrorState(dbPath)).toEqual(before);
  });

  it('explain answers for the changed member, without the lease', async () => {
    const r = await cli('explain', '--config', cfg, 'E1002');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(noteOf('explain'));
    expect(r.stdout).toContain('members E1002 (platform id');
    expect(r.stdout).toMatch(/next plan: {2}update: /);
  });

  it('mirror status and sources check work too', async () => {
    const m = await cli('mirror', 'status', '--config', cfg);
    expect(m.code).toBe(0);
    expect(m.stderr).toMatch(noteOf('mirror status'));
    expect(m.stdout).toMatch(/^members {6}active {5}\d+$/m);
    const s = await cli('sources', 'check', '--config', cfg);
    expect(s.code).toBe(0);
    expect(s.stdout).toContain('quarantine: none');
  });

  it('plan --out and sync still need the lease: refused, naming the holder', async () => {
    const out = join(dir, 'plan.json');
    for (const args of [['plan', '--config', cfg, '--out', out], ['sync', '--config', cfg]]) {
      const r = await cli(...args);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`orgsync: state DB ${esc(dbPath)} is in use by another orgsync process \\(pid ${process.pid} on `));
      expect(r.stderr).not.toContain('ran without the lease');
    }
  });

  it('with nobody holding the lease, plan prints no such line', async () => {
    daemon.shutdown.abort(new Error('stop'));
    expect(await exit).toBe(0);
    exit = undefined;
    const r = await cli('plan', '--config', cfg, '--detailed-exitcode');
    expect(r.code).toBe(5);
    expect(r.stderr).not.toContain('ran without the lease');
  });
});
