/**
 * Issue 22 point 3: every write is recorded per record (run id, trigger, operation, fields old -> new with contacts
 * masked, result); `orgsync history` prints it newest first, `explain` ends with the last three entries, and entries
 * older than state.history_days are pruned at the end of a run (under the injected clock).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runOnce } from '../../src/daemon/run-once.js';
import { RecordHistory } from '../../src/mirror/record-history.js';
import { ManualClock } from '../../src/shared/clock.js';
import { silentLogger } from '../../src/shared/logger.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { cli } from '../helpers/cli.js';
import { writeCsvConfig, writeCsvOrg } from './csv-org.js';
import { ADMIN, desiredOf, org, SyncWorld, type OrgState } from './harness.js';
import { tempDir } from '../helpers/temp.js';

const DAY = 86_400_000;

describe('record history through runOnce', () => {
  let world: SyncWorld | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('create, update, suspend and adopt are recorded newest first with masked contacts; old entries are pruned after history_days', async () => {
    world = await SyncWorld.start('id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }\n  adopt: { members: [email] }');
    const w = world;
    const clock = new ManualClock(Date.now());
    const store = new RecordHistory(w.db);
    let n = 0;
    const run = (desired: OrgState) =>
      runOnce(
        {
          config: w.config,
          client: w.client,
          mirror: w.mirror,
          ownership: w.ownership,
          logger: silentLogger,
          clock,
          readDesiredState: async () => desiredOf(structuredClone(desired)),
          recordHistory: { store, runId: `run-${++n}`, trigger: n === 1 ? 'once' : 'schedule', retentionDays: 90 },
        },
        { mode: 'apply' },
      );
    const eng: [string, string][] = [['eng', 'Engineering']];
    expect((await run(org({ departments: eng, members: [['u1', 'Ann Lee', 'ann.lee@acme.test', 'eng']] }))).exitCode).toBe(0);
    clock.set(clock.now() + DAY);
    expect((await run(org({ departments: eng, members: [['u1', 'Ann Berg', 'ann.lee@acme.test', 'eng']] }))).exitCode).toBe(0);
    clock.set(clock.now() + DAY);
    expect((await run(org({ departments: eng, members: [['u1', 'Ann Berg', 'ann.lee@acme.test', 'eng', 'suspended']] }))).exitCode).toBe(0);

    const entries = store.entries({ sourceIds: ['u1'], platformIds: [] });
    expect(entries.map((e) => [e.op, e.result, e.runId, e.trigger])).toEqual([
      ['update', 'applied', 'run-3', 'schedule'],
      ['update', 'applied', 'run-2', 'schedule'],
      ['create', 'applied', 'run-1', 'once'],
    ]);
    expect(entries[0]!.fields).toEqual({ status: { old: 'active', new: 'suspended' } });
    expect(entries[1]!.fields).toEqual({ display_name: { old: 'Ann Lee', new: 'Ann Berg' } });
    expect(entries[2]!.fields.email).toEqual({ old: null, new: 'a***@acme.test' });
    expect(entries[2]!.fields.department_id).toEqual({ old: null, new: expect.any(String) });
    expect(entries[2]!.platformId).toEqual(expect.any(String));
    expect(entries.every((e) => e.approvalDigest === null)).toBe(true);
    expect(JSON.stringify(entries)).not.toContain('ann.lee@acme.test');
    // By platform id too (the account id of the member).
    expect(store.entries({ sourceIds: [], platformIds: [entries[0]!.platformId!] })).toHaveLength(3);
    expect(store.entries({ sourceIds: ['eng'], platformIds: [] }).map((e) => `${e.entity} ${e.op}`)).toEqual(['departments create']);

    // Adoption: a member made by hand with the same e-mail as a new source record.
    await w.api('POST', '/org/members', { display_name: 'Bob By Hand', email: 'bob@acme.test', phone: '+4915112345678' });
    clock.set(clock.now() + DAY);
    const members: [string, string, string, string?, ('active' | 'suspended')?][] = [['u1', 'Ann Berg', 'ann.lee@acme.test', 'eng', 'suspended'], ['u2', 'Bob Roy', 'bob@acme.test', 'eng']];
    expect((await run(org({ departments: eng, members }))).exitCode).toBe(0);
    const bob = store.entries({ sourceIds: ['u2'], platformIds: [] });
    expect(bob).toHaveLength(1);
    expect(bob[0]).toMatchObject({ op: 'adopt', result: 'adopted', runId: 'run-4' });
    expect(JSON.stringify(bob)).not.toContain('bob@acme.test');

    // Retention: 90 days. Written on days 0 (2 creates), 1, 2 and 3 (adoption); at day 92.5 only the adoption is
    // younger than 90 days, at day 93.5 nothing is.
    expect(store.count()).toBe(5);
    clock.set(clock.now() + 89.5 * DAY);
    await run(org({ departments: eng, members }));
    expect(store.entries({ sourceIds: ['u1', 'u2', 'eng'], platformIds: [] }).map((e) => e.op)).toEqual(['adopt']);
    clock.set(clock.now() + DAY);
    await run(org({ departments: eng, members }));
    expect(store.count()).toBe(0);
  });
});

describe('orgsync history and explain', () => {
  let emulator: TestEmulator;
  let dir: string;
  afterEach(async () => {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('history prints a record newest first (text and JSON), --since narrows, explain ends with the last three entries', async () => {
    emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
    dir = tempDir('orgsync-history-');
    const config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw });
    for (const title of ['Engineer', 'Senior Engineer', 'Staff Engineer', 'Principal Engineer']) {
      writeCsvOrg(dir, org({ departments: [['eng', 'Engineering']], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng']] }), { u1: title });
      expect((await cli('sync', '--config', config)).code).toBe(0);
    }
    const text = await cli('history', '--config', config, 'u1');
    expect(text.code).toBe(0);
    const lines = text.stdout.split('\n').filter((l) => /^\d{4}-/.test(l));
    expect(lines.map((l) => l.split('  ')[1])).toEqual(['update applied', 'update applied', 'update applied', 'create applied']);
    expect(text.stdout).toContain('    title "Staff Engineer" -> "Principal Engineer"\n');
    expect(text.stdout).toMatch(/ run [0-9a-f-]{36} \(once\)/);
    expect(text.stdout).toContain('email (none) -> "a***@acme.test"');
    expect(text.stdout).not.toContain('ann@acme.test');

    const json = JSON.parse((await cli('history', '--config', config, 'ann@acme.test', '--output', 'json')).stdout);
    expect(json.entries).toHaveLength(4);
    expect(json.entries[0]).toMatchObject({ entity: 'members', source_id: 'u1', op: 'update', trigger: 'once', result: 'applied', approval_digest: null, fields: { title: { old: 'Staff Engineer', new: 'Principal Engineer' } } });
    expect((await cli('history', '--config', config, 'u1', '--since', '1h', '--output', 'json')).stdout).toContain('"source_id": "u1"');
    expect((await cli('history', '--config', config, 'nobody')).stdout).toBe('no writes recorded for "nobody"\n');
    const bad = await cli('history', '--config', config, 'u1', '--since', 'soon');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since "soon": expected a duration such as 24h, 7d or 90m');

    // A saved plan applied with `orgsync apply` is recorded too, under trigger apply.
    writeCsvOrg(dir, org({ departments: [['eng', 'Engineering']], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng']] }), { u1: 'Distinguished Engineer' });
    expect((await cli('plan', '--config', config, '--out', join(dir, 'plan.json'))).code).toBe(0);
    expect((await cli('apply', join(dir, 'plan.json'), '--config', config)).code).toBe(0);
    const applied = JSON.parse((await cli('history', '--config', config, 'u1', '--output', 'json')).stdout);
    expect(applied.entries[0]).toMatchObject({ trigger: 'apply', op: 'update', fields: { title: { old: 'Principal Engineer', new: 'Distinguished Engineer' } } });

    const explain = await cli('explain', '--config', config, 'u1');
    expect(explain.code).toBe(0);
    const tail = explain.stdout.slice(explain.stdout.indexOf('history of members u1 (last 3, newest first):'));
    expect(tail.split('\n').filter((l) => /^ {2}\d{4}-/.test(l))).toHaveLength(3);
    expect(tail).toContain('title "Principal Engineer" -> "Distinguished Engineer"');
    expect(tail).not.toContain('create applied');
  });

  it('orgsync adopt and orgsync release are recorded under their own run and trigger', async () => {
    emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
    dir = tempDir('orgsync-history-');
    const config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw });
    writeCsvOrg(dir, org({ departments: [['eng', 'Engineering']], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng']] }));
    expect((await cli('sync', '--config', config)).code).toBe(0);
    await emulator.request('POST', '/api/external/v1/org/members', { token: TEST_KEYS.acmeRw, body: { display_name: 'Cid Moe', email: 'cid@acme.test' } });
    writeCsvOrg(dir, org({ departments: [['eng', 'Engineering']], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng'], ['u3', 'Cid Moe', 'cid@acme.test']] }));
    expect((await cli('adopt', '--config', config, '--match', 'email')).code).toBe(0);
    expect((await cli('release', '--config', config, 'eng', '--entity', 'departments')).code).toBe(0);
    const cid = JSON.parse((await cli('history', '--config', config, 'cid@acme.test', '--output', 'json')).stdout);
    expect(cid.entries).toEqual([expect.objectContaining({ entity: 'members', source_id: 'u3', op: 'adopt', trigger: 'adopt', result: 'adopted' })]);
    expect(JSON.stringify(cid.entries)).not.toContain('cid@acme.test');
    const eng = JSON.parse((await cli('history', '--config', config, 'eng', '--output', 'json')).stdout);
    expect(eng.entries.map((e: { op: string; trigger: string }) => `${e.op} ${e.trigger}`)).toEqual(['release release', 'create once']);
    expect(eng.entries[0].fields).toEqual({ 'metadata.managed_by': { old: 'hr-sync', new: null } });
  });
});
