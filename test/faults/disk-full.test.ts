/**
 * Issue 42 point 3: a state DB whose disk fills during a run. The built CLI syncs into a state DB on a tmpfs too
 * small for the run's writes: it is warned of before the apply (the plan's likely writes against the free space),
 * and the run stops with the named stop (the state DB's path, the disk, what to do) and nothing after it (no
 * `internal error`), exit 1. Space freed (the tmpfs grown), the next run converges: every
 * member once on the platform, owned by this sync, and the run after it writes nothing.
 *
 * A tmpfs needs root (mount); where the test cannot mount one it skips with a printed reason, and under CI=true it
 * fails instead.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt } from '../helpers/build.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { ADMIN } from '../e2e/harness.js';
import { titledOrg, writeCsvOrg, writeFaultConfig } from './org.js';

const NO_LIMITS = { per_api_key: 0, per_session_token: 0, per_tenant: 0, per_client_id: 0 };

let emulator: TestEmulator;
let dir: string;
let disk: string;
let mounted = false;

/** Mounts a tmpfs of `size` at `disk`, or resizes the one there. */
function tmpfs(size: string, remount = false): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `${remount ? 'remount,' : ''}size=${size},mode=0700`, 'tmpfs', disk], { stdio: 'pipe' });
}

beforeAll(async () => {
  ensureBuilt();
  emulator = await startTestEmulator(orgTestSeed(NO_LIMITS), { adminToken: ADMIN });
  dir = tempDir('orgsync-diskfull-');
  disk = join(dir, 'disk');
  mkdirSync(disk);
  try {
    tmpfs('1m');
    mounted = true;
  } catch (err) {
    if (process.env.CI === 'true') throw new Error(`disk-full test: cannot mount a tmpfs (root needed): ${(err as Error).message}`);
    console.warn(`disk-full test skipped: cannot mount a tmpfs here (${(err as Error).message.split('\n')[0]})`);
  }
}, 120_000);
afterAll(async () => {
  if (mounted) execFileSync('umount', [disk]);
  await emulator.close();
});

/** `node dist/cli.js ARGS` as a process: exit code, stdout and stderr (the emulator answers from this process). */
function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The tenant's live members by third id (how many accounts each has). */
async function liveByThird(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let cursor = '';
  for (;;) {
    const res = await emulator.request('GET', `/api/external/v1/org/members?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { token: TEST_KEYS.acmeRw });
    const body = res.body as { items: { third_user_id: string; status: string }[]; next_cursor: string; has_more: boolean };
    for (const m of body.items) if (m.status !== 'left' && m.third_user_id) out.set(m.third_user_id, (out.get(m.third_user_id) ?? 0) + 1);
    if (!body.has_more) return out;
    cursor = body.next_cursor;
  }
}

/** The error line of a run (orgsync's own, first word `orgsync:`). */
const errorLine = (stderr: string): string => stderr.split('\n').filter((l) => l.startsWith('orgsync:')).join('\n');

describe('a state DB whose disk fills during a run', () => {
  it('stops with the named stop and nothing after it; with space freed the next run converges, nothing lost', async (ctx) => {
    if (!mounted) return ctx.skip();
    const { desired, titles } = titledOrg({ departments: 20, members: 1500, title: 'Engineer' });
    writeCsvOrg(dir, desired, titles);
    const config = writeFaultConfig(dir, 'disk', { baseUrl: emulator.url, state: { path: join(disk, 'state.db') } });

    const full = await run(['sync', '--config', config], { ORGSYNC_DEBUG: '1' });
    expect(full.stderr.match(/.*internal error[^]*/)?.[0]).toBeUndefined(); // the line itself when it fails
    expect(full.code, full.stderr).toBe(1);
    // Mid-run: some creates reached the platform before the disk filled.
    const before = (await liveByThird()).size;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(1500);
    expect(errorLine(full.stderr)).toMatch(/^orgsync: could not record a write: state DB \S*disk\/state\.db: the disk is full \(\d+ MB free\); free space there or grow the volume \(the Helm chart's persistence\.size; docs\/operations\.md sizes it per tenant\); nothing written is lost: the next run resumes from the state DB as it was committed: stopped after \d+ writes$/);

    tmpfs('64m', true);
    const after = await run(['sync', '--config', config]);
    expect(after.stderr.match(/.*internal error.*/)?.[0]).toBeUndefined(); // the line itself when it fails
    expect(after.code, after.stderr + after.stdout).toBe(0);
    const live = await liveByThird();
    expect(live.size).toBe(1500);
    expect([...live.values()].every((n) => n === 1)).toBe(true);
    const again = await run(['sync', '--config', config]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/in sync/);
  }, 300_000);

  it('a disk too full to open the state DB: the named error, exit 1, and the next run after space is freed converges', async (ctx) => {
    if (!mounted) return ctx.skip();
    const small = join(dir, 'small');
    mkdirSync(small);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', small], { stdio: 'pipe' });
    // A tenant of its own: the first test's sync already manages the org on the shared one.
    const own = await startTestEmulator(orgTestSeed(NO_LIMITS), { adminToken: ADMIN });
    try {
      const config = writeFaultConfig(dir, 'small', { baseUrl: own.url, state: { path: join(small, 'state.db') } });
      const r = await run(['sync', '--config', config]);
      expect(r.stderr.match(/.*internal error.*/)?.[0]).toBeUndefined(); // the line itself when it fails
      expect(r.code).toBe(1);
      expect(errorLine(r.stderr)).toMatch(/^orgsync: cannot open the state DB: state DB \S*small\/state\.db: the disk is full \(\d+ MB free\); free space there or grow the volume/);
      execFileSync('mount', ['-o', 'remount,size=64m', small], { stdio: 'pipe' });
      const after = await run(['sync', '--config', config]);
      expect(after.code, after.stderr).toBe(0);
    } finally {
      execFileSync('umount', [small]);
      await own.close();
    }
  }, 300_000);

  it("SQLite's temporary files (TMPDIR) too full to stage the members: the named error names TMPDIR, not the state DB", async (ctx) => {
    if (!mounted) return ctx.skip();
    const tmp = join(dir, 'tmp');
    mkdirSync(tmp);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', tmp], { stdio: 'pipe' });
    // More members than SQLite's page cache of the stage holds (2 MB), so the temporary file is written.
    const big = join(dir, 'big');
    mkdirSync(big);
    const { desired, titles } = titledOrg({ departments: 20, members: 20_000, title: 'Engineer' });
    writeCsvOrg(big, desired, titles);
    try {
      const config = writeFaultConfig(big, 'tmp', { baseUrl: emulator.url });
      const r = await run(['sources', 'check', '--config', config], { TMPDIR: tmp });
      expect(r.stderr.match(/.*internal error.*/)?.[0]).toBeUndefined(); // the line itself when it fails
      expect(r.code).toBe(1);
      expect(errorLine(r.stderr)).toMatch(/^orgsync: staging the sources' members in SQLite's temporary files under \S*\/tmp: the disk is full \(\d+ MB free\); point TMPDIR \(or SQLITE_TMPDIR\) at a folder with room/);
    } finally {
      execFileSync('umount', [tmp]);
    }
  }, 120_000);
});
