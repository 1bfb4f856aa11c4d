/**
 * Issue 15 point 7: every command that writes to the platform (sync, apply, adopt, release, the daemon's runs) records a
 * run-history row with its trigger and counts, and /status shows them.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { daemonMain } from '../../src/cli/commands/daemon.js';
import { loadConfig } from '../../src/config/load.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { RunHistory } from '../../src/mirror/runs.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { getJson, until, type StatusRun } from '../daemon/support.js';
import { captureContext } from '../helpers/cli.js';
import { cli } from '../helpers/cli.js';
import { writeCsvConfig, writeCsvOrg } from './csv-org.js';
import { ADMIN, org } from './harness.js';
import { tempDir } from '../helpers/temp.js';

const TREE = org({
  departments: [['eng', 'Engineering']],
  members: [
    ['u1', 'Ann Lee', 'ann@acme.test', 'eng'],
    ['u2', 'Bob Roy', 'bob@acme.test', 'eng'],
  ],
});

let emulator: TestEmulator;
let dir: string;

beforeEach(async () => {
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-history-');
});
afterEach(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('run history of every writing command', () => {
  it('sync, apply, adopt and release each leave a row with trigger and counts; /status shows them beside the daemon run', async () => {
    writeCsvOrg(dir, TREE);
    const config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw });
    expect((await cli('sync', '--config', config)).code).toBe(0);

    // A saved plan, applied: Bob's new title.
    writeCsvOrg(dir, TREE, { u2: 'Lead' });
    expect((await cli('plan', '--config', config, '--out', join(dir, 'plan.json'))).code).toBe(0);
    expect((await cli('apply', join(dir, 'plan.json'), '--config', config)).code).toBe(0);

    // A hand-made member in HR too, adopted by e-mail; then u1 released.
    const hand = await emulator.request('POST', '/api/external/v1/org/members', { token: TEST_KEYS.acmeRw, body: { display_name: 'Cid Moe', email: 'cid@acme.test' } });
    expect(hand.status).toBeLessThan(300);
    writeCsvOrg(dir, org({ ...{ departments: [['eng', 'Engineering']] }, members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng'], ['u2', 'Bob Roy', 'bob@acme.test', 'eng'], ['u3', 'Cid Moe', 'cid@acme.test']] }), { u2: 'Lead' });
    expect((await cli('adopt', '--config', config, '--match', 'email', '--dry-run')).code).toBe(0);
    expect((await cli('adopt', '--config', config, '--match', 'email')).code).toBe(0);
    expect((await cli('release', '--config', config, 'u1', '--entity', 'members')).code).toBe(0);

    const db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    try {
      const rows = new RunHistory(db).recent(10);
      // Newest first; the dry run of adopt wrote nothing and left no row.
      expect(rows.map((r) => [r.trigger, r.result, r.exitCode])).toEqual([
        ['release', 'success', 0],
        ['adopt', 'success', 0],
        ['apply', 'success', 0],
        ['once', 'success', 0],
      ]);
      expect(rows[0]!.summary).toMatchObject({ result: 'released', released: { members: 1, departments: 0, positions: 0 }, writes: 1 });
      expect(rows[1]!.summary).toMatchObject({ result: 'adopted', adopted: { members: 1, departments: 0, positions: 0 }, writes: 1 });
      expect(rows[2]!.summary).toMatchObject({ result: 'applied', writes: 1, applied: { members: { update: 1 } } });
      expect(rows[3]!.summary).toMatchObject({ result: 'applied', writes: 3, applied: { departments: { create: 1 }, members: { create: 2 } } });
      // The ownership commands are not sync runs: the last success is the apply.
      expect(new RunHistory(db).lastWith(['success', 'partial'])?.trigger).toBe('apply');
    } finally {
      db.close();
    }

    const cap = captureContext();
    let url = '';
    const exit = daemonMain(loadConfig(config, {}), cap.ctx, '127.0.0.1:0', { scheduler: new ManualScheduler(30 * 60_000), onListening: (u) => (url = u) });
    try {
      await until('the listener', () => (url ? true : undefined));
      const runs = await until('the daemon run', async () => {
        const list = (await getJson(`${url}/status`)).body.runs as StatusRun[];
        return list.length >= 5 && list[0]!.result !== 'running' ? list : undefined;
      });
      expect(runs.map((r) => r.trigger)).toEqual(['start', 'release', 'adopt', 'apply', 'once']);
      expect(runs[0]).toMatchObject({ result: 'success' });
      expect(runs[2]!.summary).toMatchObject({ adopted: { members: 1 } });
    } finally {
      cap.shutdown.abort(new Error('test over'));
      expect(await exit).toBe(0);
    }
  });
});
