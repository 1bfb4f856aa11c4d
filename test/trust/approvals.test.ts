/**
 * Pending approvals end to end through the CLI against the emulator (issue 20): the delete threshold trips -> the
 * refusal prints a pending digest -> `sync.approve` -> exactly the reviewed removals are applied; a source changed
 * between review and approval -> refused, says what changed, saved again under a new digest; an approval used twice
 * -> refused; `orgsync approvals approve` does the same without GitOps.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformMember } from '../../src/domain/index.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { ADMIN } from '../e2e/harness.js';
import { cli, writeCalls } from '../helpers/cli.js';
import { writeStaffCsv } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

let emulator: TestEmulator;
let dir: string;
let config: string;

const rows = Array.from({ length: 10 }, (_, i) => [`m${i}`, `Member ${i}`, `m${i}@acme.test`]);
const writeStaff = (ids: number[]): void => void writeStaffCsv(join(dir, 'staff.csv'), ids.map((i) => rows[i]!));
const writeConfig = (approve: string[] = []): void =>
  writeFileSync(
    config,
    `platform:
  base_url: ${emulator.url}
  api_key: ${TEST_KEYS.acmeRw}
  requests_per_second: 2000
state:
  path: ./state.db
sync:
  id: hr-sync
  delete_threshold: { max_count: 2, max_percent: 100 }
  approve: [${approve.join(', ')}]
sources:
  - name: staff
    type: csv
    members: { file: staff.csv, fields: { id: id, display_name: name, email: email } }
`,
  );
const range = (n: number, from = 0): number[] => Array.from({ length: n - from }, (_, i) => i + from);

async function liveMembers(): Promise<string[]> {
  const items = (await emulator.request('GET', '/api/external/v1/org/members?limit=200', { token: TEST_KEYS.acmeRw })).body.items as PlatformMember[];
  return items.map((m) => m.third_user_id).filter(Boolean).sort();
}

const digestIn = (text: string): string => {
  const m = /pending approval (sha256:[0-9a-f]{12})\b/.exec(text);
  if (!m) throw new Error(`no pending approval digest in: ${text}`);
  return m[1]!;
};

beforeEach(async () => {
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-approvals-');
  config = join(dir, 'orgsync.yaml');
  writeStaff(range(10));
  writeConfig();
  expect((await cli('sync', '--config', config)).code).toBe(0);
});
afterEach(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('approvals by config (sync.approve)', () => {
  it('threshold trips -> pending digest -> sync.approve -> exactly the reviewed removals; used twice -> refused', async () => {
    writeStaff(range(10, 4)); // m0..m3 leave: 4 removals over max_count 2
    const before = await writeCalls(emulator);
    const refused = await cli('sync', '--config', config);
    expect(refused.code).toBe(3);
    const digest = digestIn(refused.stderr);
    expect(refused.stderr).toContain('the plan removes 4 of 10 owned members: over sync.delete_threshold');
    expect(refused.stderr).toContain(`add ${digest} to sync.approve or run \`orgsync approvals approve ${digest}\``);
    expect(await writeCalls(emulator)).toBe(before);

    // The same refusal on the next run keeps the same digest (what a person reviews does not move under them).
    expect(digestIn((await cli('sync', '--config', config)).stderr)).toBe(digest);

    const listed = await cli('approvals', 'list', '--config', config, '--output', 'json');
    expect(listed.code).toBe(0);
    const list = JSON.parse(listed.stdout) as { approvals: { digest: string; guard: string; status: string; counts: { members: { remove: number } } }[] };
    expect(list.approvals).toHaveLength(1);
    expect(list.approvals[0]).toMatchObject({ digest, guard: 'delete_threshold', status: 'pending', counts: { members: { remove: 4 } } });
    const html = await cli('approvals', 'show', digest, '--config', config, '--output', 'html');
    expect(html.code).toBe(0);
    expect(html.stdout).toContain('<!doctype html>');
    expect(html.stdout).toContain('Refused by the delete_threshold guard');
    for (const name of ['Member 0', 'Member 1', 'Member 2', 'Member 3']) expect(html.stdout).toContain(name);
    // The report of the same plan from `plan --output html --out FILE` (no lease needed, nothing saved).
    const reportFile = join(dir, 'plan.html');
    const planned = await cli('plan', '--config', config, '--output', 'html', '--out', reportFile);
    expect(planned.code).toBe(3);
    expect(planned.stdout).toBe('');
    expect(planned.stderr).toContain(`orgsync: plan report written to ${reportFile}`);
    const report = readFileSync(reportFile, 'utf8');
    expect(report).toContain('Refused by the delete_threshold guard');
    expect(report).toContain('Member removals (4)');
    const text = await cli('approvals', 'show', digest, '--config', config);
    expect(text.stdout).toContain(`Approval ${digest} (pending), refused by delete_threshold`);

    writeConfig([digest]);
    const approved = await cli('sync', '--config', config, '--output', 'json');
    expect(approved.code).toBe(0);
    expect(await liveMembers()).toEqual(['m4', 'm5', 'm6', 'm7', 'm8', 'm9']);
    expect(await writeCalls(emulator)).toBe(before + 4);
    const usedList = JSON.parse((await cli('approvals', 'list', '--config', config, '--output', 'json')).stdout) as { approvals: { digest: string; status: string; used_by_run: string | null }[] };
    expect(usedList.approvals[0]).toMatchObject({ digest, status: 'used' });
    expect(usedList.approvals[0]!.used_by_run).toMatch(/^[0-9a-f-]{36}$/);
    // The run history records which digest approved the run.
    const db = new Database(join(dir, 'state.db'), { readonly: true });
    const run = db.prepare('SELECT id, result, summary FROM runs WHERE id = ?').get(usedList.approvals[0]!.used_by_run) as { id: string; result: string; summary: string };
    db.close();
    expect(run.result).toBe('success');
    expect(JSON.parse(run.summary)).toMatchObject({ approval: { digest, state: 'used' }, applied: { members: { remove: 4 } } });

    // Another mass removal later: the old approval listed in sync.approve is refused (used once).
    writeStaff([7, 8, 9]);
    const again = await cli('sync', '--config', config);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain(`approval ${digest} was already used by run ${usedList.approvals[0]!.used_by_run} at`);
    expect(digestIn(again.stderr)).not.toBe(digest);
    expect(await liveMembers()).toEqual(['m4', 'm5', 'm6', 'm7', 'm8', 'm9']);
  });

  it('a source changed between review and approval -> refused, says what changed, saved under a new digest', async () => {
    writeStaff(range(10, 4));
    const first = digestIn((await cli('sync', '--config', config)).stderr);
    writeStaff(range(10, 5)); // one more leaves after the review
    writeConfig([first]);
    const before = await writeCalls(emulator);
    const refused = await cli('sync', '--config', config);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`approved plan ${first} no longer applies: the sources changed since the plan was made`);
    const second = digestIn(refused.stderr);
    expect(second).not.toBe(first);
    expect(await writeCalls(emulator)).toBe(before);
    const list = JSON.parse((await cli('approvals', 'list', '--config', config, '--output', 'json')).stdout) as { approvals: { digest: string; status: string }[] };
    expect(list.approvals.map((a) => [a.digest, a.status])).toEqual([
      [second, 'pending'],
      [first, 'superseded'],
    ]);

    // Without GitOps: `approvals approve` (takes the lease) and the next run applies it.
    writeConfig();
    const ok = await cli('approvals', 'approve', second, '--config', config);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`Approved ${second} (delete_threshold)`);
    expect((await cli('sync', '--config', config)).code).toBe(0);
    expect(await liveMembers()).toEqual(['m5', 'm6', 'm7', 'm8', 'm9']);
    const twice = await cli('approvals', 'approve', second, '--config', config);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain(`approval ${second} was already used by run`);
    const unknown = await cli('approvals', 'show', 'sha256:000000000000', '--config', config);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no approval sha256:000000000000 for sync hr-sync');
    expect(readFileSync(config, 'utf8')).toContain('approve: []');
  });
});
