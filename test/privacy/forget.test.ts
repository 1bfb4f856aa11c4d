/**
 * Issue 29 point 4: `orgsync forget` against the emulator and the demo data. A person a source still lists is
 * refused (exit 2 naming the source); once they left the source and the sync removed their account, forget erases
 * their name, e-mail and phone from the state DB files byte for byte (db, -wal, -shm), and the next sync does not
 * bring them back.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { daemonMain } from '../../src/cli/commands/daemon.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { captureContext, cli } from '../helpers/cli.js';
import { demoSeed, demoWorkspace, until, type StatusRun } from '../daemon/support.js';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';

const PERSON = { id: 'E1007', name: 'Emeka Petrov', email: 'emeka.petrov@demo-corp.test', phone: '+15125550154' };
/** A second leaver, forgotten while a daemon holds the state DB. */
const SECOND = { id: 'E1008', name: 'Noah Larsen', email: 'noah.larsen@demo-corp.test', phone: '+13125550164' };

/** Which of `person`'s values each file of the state DB holds (the files that exist). */
function found(dbPath: string, person: { name: string; email: string; phone: string } = PERSON): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const file of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) {
    if (!existsSync(file)) continue;
    const bytes = readFileSync(file);
    out[file.slice(dbPath.length) || 'db'] = [person.name, person.email, person.phone].filter((v) => bytes.includes(Buffer.from(v, 'utf8')));
  }
  return out;
}

describe('orgsync forget', { timeout: 240_000 }, () => {
  let emulator: TestEmulator;
  let dir: string;
  let config: string;
  let dbPath: string;
  beforeAll(async () => {
    emulator = await startTestEmulator(demoSeed());
    dir = demoWorkspace({ url: emulator.url });
    config = join(dir, 'orgsync.yaml');
    dbPath = join(dir, 'state', 'orgsync.db');
    const first = await cli('sync', '--config', config);
    expect(first.code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await emulator?.close();
  });

  it('refuses a person a source still lists, naming the source, and changes nothing', async () => {
    const before = readFileSync(dbPath);
    const r = await cli('forget', '--config', config, PERSON.email);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`orgsync: forget "${PERSON.email}": source "hr" still lists this person, so the next run would bring them back; remove them from the source first\n`);
    expect(found(dbPath).db).toEqual([PERSON.name, PERSON.email, PERSON.phone]);
    expect(readFileSync(dbPath).equals(before)).toBe(true);
  });

  it('a leaver: present in the state DB before, absent from db, -wal and -shm after, and after the next sync', async () => {
    const csv = join(dir, 'members.csv');
    writeFileSync(csv, readFileSync(csv, 'utf8').split('\n').filter((l) => !l.startsWith(`${PERSON.id},`)).join('\n'));
    const removal = await cli('sync', '--config', config);
    expect(removal.code).toBe(0);
    expect(removal.stdout).toMatch(/^members +0 +0 +0 +0 +1$/m);
    // The mirror's tombstone and the record history still hold the person.
    expect(found(dbPath).db).toEqual([PERSON.name, PERSON.email, PERSON.phone]);

    const r = await cli('forget', '--config', config, PERSON.id);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Forgot "${PERSON.id}" (source id ${PERSON.id}, platform id `);
    expect(r.stdout).toContain('WAL truncated');
    expect(r.stdout).toContain("the platform's own record of the account (its tombstone");
    for (const v of [PERSON.name, PERSON.email, PERSON.phone]) expect(r.stdout).not.toContain(v);
    expect(Object.values(found(dbPath)).flat()).toEqual([]);

    // The history keeps ids, operations and results, and tells of the forget.
    const history = await cli('history', '--config', config, PERSON.id, '--output', 'json');
    const entries = (JSON.parse(history.stdout) as { entries: { op: string; trigger: string }[] }).entries;
    expect(entries.map((e) => `${e.trigger} ${e.op}`)).toEqual(['forget forget', 'once remove', 'once create']);
    expect(history.stdout).not.toContain('Emeka');

    const next = await cli('sync', '--config', config);
    expect(next.code).toBe(0);
    expect(Object.values(found(dbPath)).flat()).toEqual([]);
    // A full walk lists the platform's tombstone again, with the person's data: the mirror stores it blank.
    const full = await cli('mirror', 'refresh', '--full', '--config', config);
    expect(full.code).toBe(0);
    expect(Object.values(found(dbPath)).flat()).toEqual([]);
  });

  it('beside a running daemon: forget waits for its writes, and the daemon\'s next run does not bring the person back', async () => {
    const scheduler = new ManualScheduler(30 * 60_000);
    const cap = captureContext();
    let url = '';
    const exit = daemonMain(loadConfig(config, {}), cap.ctx, '127.0.0.1:0', { scheduler, onListening: (u) => (url = u) });
    try {
      await until('the listener', () => (url ? true : undefined));
      const finished = (n: number) =>
        until(`${n} finished runs`, async () => {
          const runs = ((await (await fetch(`${url}/status`)).json()) as { runs: StatusRun[] }).runs.filter((r) => r.trigger !== 'forget');
          return runs.length >= n && runs.every((r) => r.result !== 'running') ? runs : undefined;
        });
      const before = (await finished(1)).length;
      const csv = join(dir, 'members.csv');
      writeFileSync(csv, readFileSync(csv, 'utf8').split('\n').filter((l) => !l.startsWith(`${SECOND.id},`)).join('\n'));
      expect(scheduler.tick()).toBe(true);
      expect((await finished(before + 1))[0]).toMatchObject({ result: 'success' });
      expect(found(dbPath, SECOND).db).toEqual([SECOND.name, SECOND.email, SECOND.phone]);

      const r = await cli('forget', '--config', config, SECOND.email);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('WAL truncated');
      expect(Object.values(found(dbPath, SECOND)).flat()).toEqual([]);
      expect(scheduler.tick()).toBe(true);
      expect((await finished(before + 2))[0]).toMatchObject({ result: 'success' });
      expect(Object.values(found(dbPath, SECOND)).flat()).toEqual([]);
    } finally {
      cap.shutdown.abort(new Error('test over'));
      await exit;
    }
  });

  it('issue 44: stays forgotten: triggers naming the forgotten people write none of them back (db, -wal, -shm, /status, the log)', async () => {
    // Both people were forgotten above (E1007 by id, E1008 by e-mail). A webhook now names them in triggers.
    writeFileSync(join(dir, 'trigger.token'), 'trigger-token-for-forget-0001\n');
    writeFileSync(join(dir, 'read.token'), 'read-token-for-forget-0002\n');
    writeFileSync(config, `${readFileSync(config, 'utf8')}daemon:\n  trigger_token_file: trigger.token\n  read_token_file: read.token\n`);
    const scheduler = new ManualScheduler(30 * 60_000);
    const cap = captureContext();
    let url = '';
    const exit = daemonMain(loadConfig(config, {}), cap.ctx, '127.0.0.1:0', { scheduler, onListening: (u) => (url = u) });
    const selectors = [PERSON.email, PERSON.name, SECOND.email, SECOND.email.toUpperCase(), SECOND.phone];
    try {
      await until('the listener', () => (url ? true : undefined));
      const runIds: string[] = [];
      for (const selector of selectors) {
        const res = await fetch(`${url}/sync?only=${encodeURIComponent(selector)}`, { method: 'POST', headers: { authorization: 'Bearer trigger-token-for-forget-0001' } });
        expect(res.status).toBe(202);
        runIds.push(((await res.json()) as { run_id: string }).run_id);
      }
      const status = await until('the triggered runs', async () => {
        const body = await (await fetch(`${url}/status`)).text();
        const runs = (JSON.parse(body) as { runs: StatusRun[] }).runs;
        return runIds.every((id) => runs.some((r) => r.id === id && r.result !== 'running')) ? body : undefined;
      });
      // Each trigger failed for its caller (matched no record), recorded without the selector.
      const run = (await (await fetch(`${url}/runs/${runIds[0]!}`, { headers: { authorization: 'Bearer read-token-for-forget-0002' } })).json()) as { result: string; exitCode: number; error: string };
      expect(run).toMatchObject({ result: 'failed', exitCode: 2 });
      // Triggers queued behind a run join it: the error names the selectors by position, never by value.
      expect(run.error).toMatch(/^--only: selectors? [\d, and]+ of \d matched no record/);
      for (const v of [PERSON.name, PERSON.email, SECOND.name, SECOND.email, SECOND.phone]) {
        expect(status.toLowerCase()).not.toContain(v.toLowerCase());
        expect(cap.out.stdout.toLowerCase()).not.toContain(v.toLowerCase());
      }
    } finally {
      cap.shutdown.abort(new Error('test over'));
      await exit;
    }
    expect(Object.values(found(dbPath)).flat()).toEqual([]);
    expect(Object.values(found(dbPath, SECOND)).flat()).toEqual([]);
  });

  it('issue 44: forget again, by id or by e-mail, also erases what an older version recorded (a run error quoting the e-mail)', async () => {
    // A run row as orgsync before issue 44 wrote it for a trigger naming the person.
    const db = openStateDb(dbPath, { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    try {
      db.prepare("INSERT INTO runs (id, trigger, started_at, finished_at, result, exit_code, summary, error) VALUES ('legacy-run', 'http', 1, 2, 'failed', 2, ?, ?)").run(
        JSON.stringify({ unmatched: [PERSON.email] }),
        `--only "${PERSON.email}" matched no record: not a source id, e-mail or department path in the sources or on the platform`,
      );
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
    expect(found(dbPath).db).toEqual([PERSON.email]);

    const again = await cli('forget', '--config', config, PERSON.id);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Forgot "${PERSON.id}" (source id ${PERSON.id}, platform id `);
    expect(again.stdout).toMatch(/^ {2}forgotten before \(\d{4}-\d\d-\d\dT[^)]*\); erased again wherever the state DB held them since$/m);

    // By e-mail: no record of the state DB carries it any more, yet its copies go.
    const byEmail = await cli('forget', '--config', config, PERSON.email);
    expect(byEmail.stderr).toBe('');
    expect(byEmail.code).toBe(0);
    expect(byEmail.stdout).toContain('no record of the state DB carries this e-mail any more (forgotten before, or never synced); every copy of the e-mail itself was erased');
    expect(byEmail.stdout).toMatch(/run summaries: 1;/);
    expect(Object.values(found(dbPath)).flat()).toEqual([]);
    // An id nothing knows is still refused.
    const unknown = await cli('forget', '--config', config, 'E0000-nobody');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no member of the mirror matches');
  });
});
