/**
 * kill -9 of `node dist/cli.js sync` at random moments while it applies, at least 10 times, then a clean run:
 * the final state equals the desired one, nothing is duplicated, and nothing owned by someone else was touched.
 * Needs the build (ensureBuilt in beforeAll: builds only when dist/ is older than the sources).
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformDepartment, PlatformMember } from '../../src/domain/index.js';
import { writeCalls } from '../helpers/cli.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { writeCsvConfig, writeCsvOrg } from './csv-org.js';
import { ADMIN, expectedView, org, type OrgState, type OrgView } from './harness.js';
import { tempDir } from '../helpers/temp.js';
import { CLI, ensureBuilt } from '../helpers/build.js';


/** Variant i of the org: every variant renames departments and retitles members; odd ones swap 30 members. */
function variant(i: number): { desired: OrgState; titles: Record<string, string> } {
  const departments: [string, string, string?][] = Array.from({ length: 12 }, (_, k) => [`d${k}`, `Dept ${k} v${i}`, k >= 4 ? `d${k % 4}` : undefined]);
  const people = Array.from({ length: 150 }, (_, k) => (i % 2 === 1 && k >= 120 ? `n${k}` : `m${k}`));
  const desired = org({
    departments,
    positions: [['p1', `Engineer v${i}`]],
    members: people.map((id, k) => [id, `Person ${id}`, `${id}@acme.test`, `d${(k + i) % 12}`]),
  });
  const titles = Object.fromEntries(people.map((id) => [id, `Title v${i}`]));
  for (const m of desired.members) m.title = titles[m.source_id];
  return { desired, titles };
}

let emulator: TestEmulator;
let dir: string;

const api = async (method: string, path: string, body?: unknown) => {
  const r = await emulator.request(method, `/api/external/v1${path}`, { token: TEST_KEYS.acmeRw, ...(body !== undefined ? { body } : {}) });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};
async function listAll<T>(entity: string): Promise<T[]> {
  const out: T[] = [];
  let cursor = '';
  for (;;) {
    const page = await api('GET', `/org/${entity}?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    out.push(...page.items);
    if (!page.has_more) return out;
    cursor = page.next_cursor;
  }
}
const writes = (): Promise<number> => writeCalls(emulator);

/** Runs the sync; with `killAfterWriteMs` kills it with SIGKILL that long after its first write. */
function runSync(config: string, killAfterWriteMs?: number): Promise<{ code: number | null; signal: string | null; killedMidApply: boolean; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [CLI, 'sync', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.resume();
    let killedMidApply = false;
    let exited = false;
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      exited = true;
      resolveRun({ code, signal, killedMidApply, stderr });
    });
    if (killAfterWriteMs === undefined) return;
    void (async () => {
      const base = await writes();
      while (!exited && (await writes()) === base) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, killAfterWriteMs));
      if (!exited) {
        killedMidApply = true;
        child.kill('SIGKILL');
      }
    })();
  });
}

beforeAll(async () => {
  ensureBuilt();
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-kill-');
}, 240_000);
afterAll(async () => {
  await emulator?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('kill -9 while applying', () => {
  it('converges after 10+ kills with no duplicates and nothing of others touched', async () => {
    const config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw });
    // Records orgsync does not own: another sync's department and a hand-made member in it.
    const other = await api('POST', '/org/departments', { name: 'Other sync', third_department_id: 'x-other', metadata: { managed_by: 'someone-else' } });
    const hank = await api('POST', '/org/members', { display_name: 'Hank Hand', email: 'hank@acme.test', third_user_id: 'hank', department_id: other.id });
    // Adding Hank changed the department's member_count (and so its version): take its version after that.
    const otherNow = await api('GET', `/org/departments/${other.id}`);
    // Writes take a few ms each, so a kill lands in the middle of an apply.
    await emulator.request('PUT', '/_emulator/faults', { token: ADMIN, body: { latency_ms: [2, 6], methods: ['POST', 'PATCH', 'DELETE'] } });

    let kills = 0;
    let i = 0;
    const outcomes: string[] = [];
    for (; kills < 10 && i < 30; i += 1) {
      const v = variant(i);
      writeCsvOrg(dir, v.desired, v.titles);
      const r = await runSync(config, Math.floor(Math.random() * 400));
      if (r.killedMidApply) kills += 1;
      else if (r.code !== 0) throw new Error(`sync exited ${r.code}: ${r.stderr.slice(-2000)}`);
      outcomes.push(r.killedMidApply ? 'killed' : `exit ${r.code}`);
    }
    expect(kills, outcomes.join(', ')).toBeGreaterThanOrEqual(10);

    await emulator.request('DELETE', '/_emulator/faults', { token: ADMIN });
    const final = variant(i);
    writeCsvOrg(dir, final.desired, final.titles);
    const done = await runSync(config);
    expect(done.code, done.stderr.slice(-2000)).toBe(0);

    const depts = await listAll<PlatformDepartment>('departments');
    const members = await listAll<PlatformMember>('members');
    // No duplicates.
    const thirdIds = depts.map((d) => d.third_department_id).filter(Boolean);
    expect(new Set(thirdIds).size).toBe(thirdIds.length);
    const emails = members.map((m) => m.email);
    expect(new Set(emails).size).toBe(emails.length);
    // Final state equals the desired one (plus what is not ours).
    const byId = new Map(depts.map((d) => [d.id, d]));
    const view: OrgView = { departments: {}, positions: {}, members: {} };
    for (const d of depts) if (d.depth > 0) view.departments[d.path] = { third: d.third_department_id, managedBy: String(d.metadata.managed_by ?? '') };
    for (const m of members) view.members[m.third_user_id || m.email] = { name: m.display_name, email: m.email, department: byId.get(m.department_id)?.path ?? '', status: m.status };
    const want = expectedView(final.desired);
    expect(view.departments).toEqual({ ...want.departments, '/Acme/Other sync': { third: 'x-other', managedBy: 'someone-else' } });
    expect(view.members).toEqual({
      ...want.members,
      'ada@acme.test': { name: 'Ada Admin', email: 'ada@acme.test', department: '', status: 'active' },
      hank: { name: 'Hank Hand', email: 'hank@acme.test', department: '/Acme/Other sync', status: 'active' },
    });
    const titles = new Map(members.map((m) => [m.third_user_id, m.title]));
    for (const m of final.desired.members) expect(titles.get(m.source_id)).toBe(final.titles[m.source_id]);
    // Untouched: same version as when made.
    expect(await api('GET', `/org/departments/${other.id}`)).toEqual(otherNow);
    expect(await api('GET', `/org/members/${hank.account_id}`)).toEqual(hank);
    // And a second run has nothing to do.
    const before = await writes();
    expect((await runSync(config)).code).toBe(0);
    expect(await writes()).toBe(before);
  }, 300_000);
});
