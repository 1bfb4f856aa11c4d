/**
 * Issue 32 point 3: plan and sync account for every source record. `sources check` counts what the sources hold;
 * `plan` and `sync` say where each of those records went: planned (to create, update, ...), unchanged, or left alone
 * with the reason, one line per reason and source, and the plan's bracketed totals say they count changes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { writeCsv } from '../helpers/fixtures.js';
import { captureContext, cli } from '../helpers/cli.js';
import { repoRoot } from '../daemon/support.js';

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

let emulator: TestEmulator;
let dir: string;

beforeEach(async () => {
  emulator = await startTestEmulator(orgTestSeed());
  dir = tempDir('orgsync-accounting-');
});
afterEach(async () => {
  await emulator.close();
});

/** A CSV of six people: two to create, a terminated one, a contractor out of scope, a future hire, a bad e-mail. */
function writePeople(): string {
  writeCsv(
    join(dir, 'people.csv'),
    ['id', 'name', 'email', 'status', 'start', 'type'],
    [
      ['E1', 'Ann Lee', 'ann@example.com', 'active', day(-100), 'employee'],
      ['E2', 'Bob Roy', 'bob@example.com', 'leave', day(-100), 'employee'],
      ['E3', 'Cid Moe', 'cid@example.com', 'terminated', day(-100), 'employee'],
      ['C1', 'Dee Fox', 'dee@example.com', 'active', day(-100), 'contractor'],
      ['H1', 'Eve Kim', 'eve@example.com', 'active', day(30), 'employee'],
      ['E4', 'Fay Ng', 'not-an-email', 'active', day(-100), 'employee'],
    ],
  );
  const file = join(dir, 'orgsync.yaml');
  writeFileSync(
    file,
    `platform:\n  base_url: ${emulator.url}\n  api_key: ${TEST_KEYS.acmeRw}\nstate:\n  path: ./state.db\nsync:\n  id: hr-sync\n  lifecycle: { create_days_before_start: 0 }\nlog:\n  level: silent\nsources:\n  - name: hr\n    type: csv\n    members:\n      file: people.csv\n      exclude: [{ field: type, values: [contractor] }]\n      fields: { id: id, display_name: name, email: email, status: status, start_date: start }\n      status_map: { active: active, leave: suspended, terminated: left }\n`,
  );
  return file;
}

describe('every source record accounted for', () => {
  it('sources check counts six records; plan and sync say where each went, one line per reason', async () => {
    const config = writePeople();
    const check = await cli('sources', 'check', '--config', config);
    expect(check.code).toBe(4);
    expect(check.stdout).toContain('source hr (csv): 0 departments, 0 positions, 4 members, 1 quarantined, out of scope: 1 members\n');

    const plan = await cli('plan', '--config', config);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('Plan: 2 to create, 0 to adopt, 1 to update, 0 to move, 0 to remove. (changes: positions 0, departments 0, members 3)\n');
    expect(plan.stdout.slice(plan.stdout.lastIndexOf('Plan: '))).toBe(
      [
        'Plan: 2 to create, 0 to adopt, 1 to update, 0 to move, 0 to remove. (changes: positions 0, departments 0, members 3)',
        'Source records (each counted once: planned, unchanged or left alone):',
        '  positions: 0 records: 0 to create, 0 to update, 0 unchanged',
        '  departments: 0 records: 0 to create, 0 to update, 0 unchanged',
        '  members: 6 records: 2 to create, 0 to update, 0 unchanged, 4 left alone',
        '  1 member with status left: not created (source hr)',
        '  1 member scheduled (start date ahead): not created yet (source hr)',
        '  1 member quarantined: not planned (see quarantined) (source hr)',
        "  1 member out of scope (the source's include/exclude rules): not read (source hr)",
        '',
      ].join('\n'),
    );

    const json = await cli('plan', '--config', config, '--output', 'json');
    const doc = JSON.parse(json.stdout) as { records: Record<string, unknown> };
    expect(doc.records.members).toEqual({
      total: 6,
      create: 2,
      adopt: 0,
      update: 0,
      remove: 0,
      unchanged: 0,
      left_alone: [
        { reason: 'status_left', source: 'hr', count: 1 },
        { reason: 'scheduled', source: 'hr', count: 1 },
        { reason: 'quarantined', source: 'hr', count: 1 },
        { reason: 'out_of_scope', source: 'hr', count: 1 },
      ],
    });

    const sync = await cli('sync', '--config', config);
    expect(sync.code).toBe(4);
    expect(sync.stdout).toContain('  members: 6 records: 2 to create, 0 to update, 0 unchanged, 4 left alone\n');
    const again = await cli('sync', '--config', config, '--output', 'json');
    expect((JSON.parse(again.stdout) as { records: { members: { unchanged: number; create: number } } }).records.members).toMatchObject({ create: 0, unchanged: 2 });
  });

  it("the demo's plan accounts for its 313 member records: 304 created, 9 with status left", async () => {
    const cap = captureContext({});
    expect(await main(['demo'], cap.ctx)).toBe(0);
    const [first, second] = cap.out.stdout.split('== Run 2: the same data again ==');
    expect(first).toContain(
      [
        'Plan: 402 to create, 0 to adopt, 15 to update, 0 to move, 0 to remove. (changes: positions 62, departments 36, members 319)',
        'Source records (each counted once: planned, unchanged or left alone):',
        '  positions: 62 records: 62 to create, 0 to update, 0 unchanged',
        '  departments: 36 records: 36 to create, 0 to update, 0 unchanged',
        '  members: 313 records: 304 to create, 0 to update, 0 unchanged, 9 left alone',
        '  7 members with status left: not created (source hr)',
        '  2 members with status left: not created (source hris)',
        '',
      ].join('\n'),
    );
    expect(second).toContain('  members: 313 records: 0 to create, 0 to update, 304 unchanged, 9 left alone\n');
    // `sources check` of the same config reads exactly these records (253 + 60).
    const check = await cli('sources', 'check', '--config', join(repoRoot, 'config', 'demo', 'orgsync.yaml'));
    expect(check.stdout).toContain('source hr (csv): 36 departments, 62 positions, 253 members, 0 quarantined\n');
    expect(check.stdout).toContain('source hris (hris-json): 0 departments, 0 positions, 60 members, 0 quarantined\n');
  }, 120_000);
});
