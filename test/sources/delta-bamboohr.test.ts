/**
 * BambooHR read by delta (issue 31 point 3), through `orgsync sync` into the emulator, against a loopback BambooHR
 * that speaks the custom report (with `filters.employeeIds`) and `/v1/employees/changed?since=`
 * (test/sources/delta-support.ts): the first read is the full report, later runs ask what changed since the
 * watermark (the server's Date minus the overlap), drop the Deleted and read the Inserted and Updated again with the
 * report filtered to their ids; a full read then finds the same state.
 */
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateDb } from '../../src/mirror/db.js';
import { SourceSnapshotStore } from '../../src/mirror/source-snapshot.js';
import { bambooTime } from '../../src/sources/hris-json/bamboohr-delta.js';
import { orgTestSeed, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { bambooEmployee, platformMembers, startBamboo, syncJson, writeSyncConfig, type BambooDouble } from './delta-support.js';

const ENV = { BAMBOO_KEY: 'bamboo-key' };

let dir: string;
let emulator: TestEmulator;
let bamboo: BambooDouble;
let file: string;

beforeEach(async () => {
  dir = tempDir('orgsync-delta-bamboo-');
  emulator = await startTestEmulator(orgTestSeed());
  bamboo = await startBamboo(Array.from({ length: 8 }, (_, i) => bambooEmployee(i + 1)));
  // overlap 1s: the watermark is a second before the server's Date, so each run hears exactly the changes made since
  // (the double's clock moves a minute between the runs).
  file = writeSyncConfig(
    dir,
    emulator,
    `  - name: hr
    preset: bamboohr
    base_url: ${bamboo.base}
    auth: { type: basic, username: "\${BAMBOO_KEY}", password: x }
    members:
      delta: { overlap: 1s, batch_size: 2 }
`,
  );
});

afterEach(async () => {
  await bamboo.close();
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

const worldView = (): Record<string, string> => Object.fromEntries([...bamboo.employees.values()].map((e) => [e.id, `${e.firstName} ${e.lastName}|${e.jobTitle}`]));
async function platformView(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [id, m] of await platformMembers(emulator)) out[id] = `${m.display_name}|${m.title ?? ''}`;
  return out;
}

describe('BambooHR by delta', () => {
  it('reads the report in full first, then the changed employees only; a full read then agrees', async () => {
    const first = await syncJson(file, ENV);
    expect([first.code, first.stderr]).toEqual([0, '']);
    expect(first.doc.source_reads).toEqual([{ source: 'hr', mode: 'full', reason: 'first read', records_read: 8 }]);
    expect(bamboo.requests.map((r) => r.path)).toEqual(['/api/gateway.php/acme/v1/reports/custom']);
    expect(await platformView()).toEqual(worldView());
    const db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const head = new SourceSnapshotStore(db).head('hr');
    db.close();
    // The watermark is the server's time of the read (its Date header) minus the overlap, as `since` takes it.
    expect(head?.watermark).toBe('2026-11-27T11:59:59Z');

    bamboo.tick(60_000);
    bamboo.put({ ...bamboo.employees.get('3')!, jobTitle: 'Controller' });
    bamboo.put({ ...bamboo.employees.get('5')!, lastName: 'Okafor' });
    bamboo.put(bambooEmployee(9));
    bamboo.remove('6');
    bamboo.tick(60_000);
    const mark = bamboo.requests.length;
    const second = await syncJson(file, ENV);
    expect([second.code, second.stderr]).toEqual([0, '']);
    expect(second.doc.source_reads).toEqual([{ source: 'hr', mode: 'delta', reason: expect.stringMatching(/^changes since the read of /), records_read: 4 }]);
    const asked = bamboo.requests.slice(mark);
    expect(asked[0]!.path).toBe('/api/gateway.php/acme/v1/employees/changed');
    expect(asked[0]!.query.get('since')).toBe(head!.watermark);
    // Three changed employees, two per report request (batch_size), filtered to their ids.
    const filters = asked.slice(1).map((r) => (JSON.parse(r.body) as { filters: { employeeIds: number[] } }).filters.employeeIds);
    expect(filters.flat().sort()).toEqual([3, 5, 9]);
    expect(filters.map((f) => f.length)).toEqual([2, 1]);
    expect(await platformView()).toEqual(worldView());

    const full = await syncJson(file, ENV, '--full-read', '--dry-run');
    expect(full.doc.source_reads).toEqual([{ source: 'hr', mode: 'full', reason: '--full-read', records_read: 8 }]);
    expect(full.doc.result).toBe('in_sync');
    // Nothing changed since: the next delta asks and reads nobody again.
    bamboo.tick(60_000);
    const quiet = await syncJson(file, ENV);
    expect(quiet.doc.source_reads).toEqual([{ source: 'hr', mode: 'delta', reason: expect.any(String), records_read: 0 }]);
    expect(quiet.doc.result).toBe('in_sync');
  });

  it('since is written as BambooHR takes it: to the second, in UTC', () => {
    expect(bambooTime(Date.UTC(2026, 10, 27, 13, 5, 9, 731))).toBe('2026-11-27T13:05:09Z');
  });
});
