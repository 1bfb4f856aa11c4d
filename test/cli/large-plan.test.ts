/**
 * Issue 31 point 1: the commands a user runs, at a size past the old limit. A CSV of 130,000 members into an empty
 * tenant used to end `plan` with "Maximum call stack size exceeded" from about 120,000 changes on (the text table
 * spread every change into Math.max). Here the built CLI (node dist/cli.js, as a user runs it) plans it as text, JSON
 * and HTML and dry-runs the sync against the emulator: the reports list a bounded number of rows per list and say how
 * many more there are, the JSON lists every change. `plan --out` saves the plan signed and `apply` reads, checks and
 * starts applying it. The million-member run is `npm run bench:commands`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvSourceConfig, writeOrgCsv } from '../../bench/lib/synthetic-org.js';
import type { PlanJson } from '../../src/planner/render.js';
import { CLI, ensureBuilt } from '../helpers/build.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { ADMIN } from '../e2e/harness.js';

const MEMBERS = 130_000;

let emulator: TestEmulator;
let dir: string;
let config: string;

/**
 * Runs `node dist/cli.js ...args` with stdout into a file (a JSON plan of 130,000 changes is 150 MB); `meanwhile`
 * runs while it does (given the child, to signal it).
 */
async function run(name: string, args: string[], meanwhile?: (child: ChildProcess) => Promise<void>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const outFile = join(dir, `${name}.out`);
  const fd = openSync(outFile, 'w');
  let stderr = '';
  try {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', fd, 'pipe'] });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await meanwhile?.(child);
    const code = await exited;
    return { code, stdout: readFileSync(outFile, 'utf8'), stderr };
  } finally {
    closeSync(fd);
  }
}

async function writes(): Promise<number> {
  const res = await emulator.request('GET', '/_emulator/requests', { token: ADMIN });
  return (res.body.requests as { method: string; count: number }[]).filter((r) => r.method !== 'GET').reduce((n, r) => n + r.count, 0);
}

const fmt = (n: number) => n.toLocaleString('en-US');

beforeAll(async () => {
  ensureBuilt();
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-large-');
  await writeOrgCsv(dir, { members: MEMBERS, departments: 650, positions: 500, seed: 7 });
  config = join(dir, 'orgsync.yaml');
  writeFileSync(
    config,
    `${JSON.stringify({
      platform: { base_url: emulator.url, api_key: TEST_KEYS.acmeRw },
      state: { path: './state.db' },
      sync: { id: 'large', delete_threshold: { max_count: 10, max_percent: 100 } },
      sources: [csvSourceConfig()],
      log: { level: 'warn' },
    })}\n`,
  );
}, 120_000);

afterAll(async () => {
  await emulator.close();
});

describe(`plan and sync --dry-run of ${fmt(MEMBERS)} members into an empty tenant, through the built CLI`, () => {
  let json: PlanJson;

  it('--output json lists every change, one document, and accounts for every source record', async () => {
    const r = await run('json', ['plan', '--config', config, '--output', 'json']);
    expect(r.code, r.stderr).toBe(0);
    json = JSON.parse(r.stdout) as PlanJson;
    expect(json.changes).toHaveLength(json.summary.total);
    const creates = json.changes.filter((c) => c.entity === 'members' && c.op === 'create');
    expect(creates).toHaveLength(json.summary.members.create!);
    expect(json.summary.members.create!).toBeGreaterThan(120_000);
    expect(new Set(creates.map((c) => c.third_id)).size).toBe(creates.length);
    // Every member of the CSV is either created or left alone (the generator's `terminated` people: status left).
    const records = json.records!.members;
    expect(records.total).toBe(MEMBERS);
    const leftAlone = records.left_alone.reduce((n, l) => n + l.count, 0);
    expect(records.left_alone.map((l) => l.reason)).toEqual(['status_left']);
    expect(records.create + leftAlone).toBe(MEMBERS);
    expect(records.create).toBe(creates.length);
  }, 180_000);

  it('text lists at most 50 rows per table, says how many more, and where the rest are', async () => {
    const r = await run('text', ['plan', '--config', config]);
    expect(r.code, r.stderr).toBe(0);
    const createCount = json.summary.members.create!;
    const updateCount = json.summary.members.update!;
    expect(r.stdout).toContain(`\nmembers create (${createCount})\n`);
    expect(r.stdout).toContain(`\n  ... and ${fmt(createCount - 50)} more members to create (--full prints all)\n`);
    expect(r.stdout).toContain(`\n  ... and ${fmt(updateCount - 50)} more members to update (--full prints all)\n`);
    expect(r.stdout).toContain(`\n  ... and ${fmt(650 - 50)} more departments to create (--full prints all)\n`);
    const omitted = json.summary.total - 4 * 50;
    expect(r.stdout).toContain(`\nNot listed above: ${fmt(omitted)} rows (--full prints every row; the JSON output lists every change: --output json).\n`);
    const memberRows = r.stdout.split('\n').filter((l) => /^ {2}\+ E\d{7} /.test(l));
    expect(memberRows).toHaveLength(50);
    const leftAlone = MEMBERS - createCount;
    expect(r.stdout).toContain(`\n  members: ${fmt(MEMBERS)} records: ${fmt(createCount)} to create, 0 to update, 0 unchanged, ${fmt(leftAlone)} left alone\n  ${fmt(leftAlone)} members with status left: not created (source hr)\n`);
  }, 180_000);

  it('--output html lists at most 200 rows per table and says how many more', async () => {
    const r = await run('html', ['plan', '--config', config, '--output', 'html']);
    expect(r.code, r.stderr).toBe(0);
    const createCount = json.summary.members.create!;
    expect(r.stdout).toContain(`<h2 id="member-creates-h">Member creates (${createCount})</h2>`);
    expect(r.stdout).toContain(`<p class="more" id="member-creates-more">… and ${fmt(createCount - 200)} more member creates (the JSON output lists every change`);
    expect(r.stdout.match(/<tr class="row" data-kind="create">/g)?.length).toBe(200 + 200);
    expect(r.stdout.endsWith('</html>\n')).toBe(true);
  }, 180_000);

  it('sync --dry-run goes through every change without writing', async () => {
    const before = await writes();
    const r = await run('dry', ['sync', '--config', config, '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`dry run: ${json.summary.total} changes would be applied (nothing written)`);
    expect(r.stdout).toContain(`  members: ${fmt(MEMBERS)} records: ${fmt(json.summary.members.create!)} to create, 0 to update, 0 unchanged,`);
    expect(await writes()).toBe(before);
  }, 180_000);

  it('plan --out saves every change signed (0600); apply of the file checks it and starts writing exactly it', async () => {
    const file = join(dir, 'saved-plan.json');
    const planned = await run('out', ['plan', '--config', config, '--out', file]);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stderr).toContain(`orgsync: plan written to ${file}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { kind: string; integrity: string; counts: { members: { create: number } }; plan: { changes: { id: string }[] } };
    expect(saved.kind).toBe('orgsync-saved-plan');
    expect(saved.integrity).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(saved.counts.members.create).toBe(json.summary.members.create);
    expect(saved.plan.changes.map((c) => c.id)).toEqual(json.changes.map((c) => c.id));

    const before = await writes();
    const applied = await run('apply', ['apply', file, '--config', config], async (child) => {
      // Applying 130,000 changes at the platform's 100 requests per second takes over 20 minutes: the test stops the
      // apply (SIGTERM, as a user's Ctrl-C) once its first writes reached the platform.
      while (child.exitCode === null && (await writes()) < before + 20) await new Promise((r) => setTimeout(r, 200));
      child.kill('SIGTERM');
    });
    expect(applied.code, applied.stderr).toBe(143);
    const written = (await writes()) - before;
    expect(written).toBeGreaterThanOrEqual(20);
    expect(written).toBeLessThan(json.summary.total);
    expect(applied.stdout).toMatch(/^sync large: stopped before the end \(exit 1\) in \d+\.\d s\n/);
    expect(applied.stdout).toContain('\nerror: stopped by a shutdown signal: writes in flight finished, nothing new was started\n');
    // Its table of applied changes accounts for every write the platform received.
    const rows = applied.stdout.split('\n').filter((l) => /^(positions|departments|members) /.test(l));
    expect(rows).toHaveLength(3);
    let listed = 0;
    for (const row of rows) for (const n of row.trim().split(/\s+/).slice(1)) listed += Number(n);
    expect(listed).toBe(written);
  }, 300_000);
});
