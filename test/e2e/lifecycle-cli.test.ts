/**
 * Dated lifecycle through the CLI against the emulator (issue 18 point 5): a future hire is `scheduled` in the plan,
 * not created by `sync`, and `explain` says why; with a longer create_days_before_start the same hire is created; a
 * leaver past end_date whom the export still lists as active is removed. Dates are relative to the real clock the
 * CLI runs on (the rules themselves are tested with an injected clock in test/planner/lifecycle.test.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformMember } from '../../src/domain/index.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { cli } from '../helpers/cli.js';

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

let emulator: TestEmulator;
let dir: string;
const config = (days: number) => {
  const file = join(dir, `orgsync-${days}.yaml`);
  writeFileSync(
    file,
    `platform:\n  base_url: ${emulator.url}\n  api_key: ${TEST_KEYS.acmeRw}\nstate:\n  path: ./state.db\nsync:\n  id: hr-sync\n  lifecycle: { create_days_before_start: ${days} }\n  delete_threshold: { max_count: 500, max_percent: 100 }\nlog:\n  level: silent\nsources:\n  - name: hr\n    type: csv\n    members:\n      file: people.csv\n      fields: { id: id, display_name: name, email: email, status: status, start_date: start, end_date: end }\n`,
  );
  return file;
};
const members = async () => ((await emulator.request('GET', '/api/external/v1/org/members?limit=200', { token: TEST_KEYS.acmeRw })).body.items as PlatformMember[]).filter((m) => m.third_user_id !== '');

beforeEach(async () => {
  emulator = await startTestEmulator(orgTestSeed());
  dir = tempDir('orgsync-lifecycle-cli-');
});
afterEach(async () => {
  await emulator.close();
});

describe('dated lifecycle through plan, sync and explain', () => {
  it('schedules a future hire, creates them within create_days_before_start, and removes a leaver on the end date', async () => {
    writeFileSync(join(dir, 'people.csv'), `id,name,email,status,start,end\nE1,Ann Now,ann@example.com,active,${day(-100)},\nH1,Hana Future,hana@example.com,active,${day(30)},\nL1,Leo Leaving,leo@example.com,active,${day(-100)},${day(60)}\n`);
    const c0 = config(0);
    const plan = await cli('plan', '--config', c0, '--output', 'json');
    expect(plan.code).toBe(0);
    const doc = JSON.parse(plan.stdout) as { summary: { scheduled: number; ended: number }; lifecycle: { scheduled: { third_id: string; start_date: string }[] } };
    expect(doc.summary).toMatchObject({ scheduled: 1, ended: 0 });
    expect(doc.lifecycle.scheduled).toEqual([expect.objectContaining({ third_id: 'H1', start_date: day(30) })]);

    expect((await cli('sync', '--config', c0)).code).toBe(0);
    expect((await members()).map((m) => m.third_user_id).sort()).toEqual(['E1', 'L1']);
    const why = await cli('explain', '--config', c0, 'H1');
    expect(why.code).toBe(0);
    expect(why.stdout).toContain(`next plan:  scheduled: not created yet: start_date ${day(30)}; created from `);

    // Hired within 60 days of the start: created now.
    expect((await cli('sync', '--config', config(60))).code).toBe(0);
    expect((await members()).map((m) => m.third_user_id).sort()).toEqual(['E1', 'H1', 'L1']);

    // Leo's end date moves into the past while the export still says active: he goes.
    writeFileSync(join(dir, 'people.csv'), `id,name,email,status,start,end\nE1,Ann Now,ann@example.com,active,${day(-100)},\nH1,Hana Future,hana@example.com,active,${day(30)},\nL1,Leo Leaving,leo@example.com,active,${day(-100)},${day(-1)}\n`);
    const text = await cli('plan', '--config', config(60));
    expect(text.stdout).toContain(`ended (1)\n  < members L1: "Leo Leaving" end_date ${day(-1)} has passed: removed\n`);
    expect((await cli('sync', '--config', config(60))).code).toBe(0);
    expect((await members()).map((m) => m.third_user_id).sort()).toEqual(['E1', 'H1']);
  });

  it('says what happens to leavers: a future end date in the plan beside the starts, and why explain finds nothing to do (issue 45)', async () => {
    writeFileSync(join(dir, 'people.csv'), `id,name,email,status,start,end\nH1,Hana Future,hana@example.com,active,${day(30)},\nL1,Leo Leaving,leo@example.com,active,${day(-100)},${day(60)}\nX1,Xena Gone,xena@example.com,left,${day(-900)},\n`);
    const c0 = config(0);
    const text = await cli('plan', '--config', c0);
    expect(text.stdout).toContain(`scheduled (1)\n  > members H1: "Hana Future" starts ${day(30)}; created from `);
    expect(text.stdout).toContain(`\nscheduled ends (1)\n  < members L1: "Leo Leaving" ends ${day(60)}; removed from ${day(60)}T00:00:00.000Z\n`);
    const doc = JSON.parse((await cli('plan', '--config', c0, '--output', 'json')).stdout) as { summary: { ending: number }; lifecycle: { ending: { third_id: string; end_date: string; action: string }[] } };
    expect(doc.summary.ending).toBe(1);
    expect(doc.lifecycle.ending).toEqual([{ third_id: 'L1', display_name: 'Leo Leaving', end_date: day(60), end_at: `${day(60)}T00:00:00.000Z`, action: 'remove' }]);
    expect((await cli('sync', '--config', c0)).code).toBe(0);
    expect((await members()).map((m) => m.third_user_id).sort()).toEqual(['L1']);
    const leo = await cli('explain', '--config', c0, 'L1');
    expect(leo.stdout).toContain(`next plan:  ending: end_date ${day(60)} is ahead: synced as the source says until then; removed from ${day(60)}T00:00:00.000Z (sync.lifecycle.end_action)`);
    const xena = await cli('explain', '--config', c0, 'X1');
    expect(xena.code).toBe(0);
    expect(xena.stdout).toContain('next plan:  nothing: not synced (status left): the source says status left and no account is on the platform; a leaver is never created');
  });
});
