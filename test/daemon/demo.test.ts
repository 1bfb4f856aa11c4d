import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { repoRoot } from './support.js';
import { captureContext } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** The commands of the demo's "Next:" paragraph (indented lines after it). */
function nextCommands(stdout: string): string[] {
  const after = stdout.slice(stdout.indexOf('\nNext: ') + 1).split('\n').slice(1);
  return after.filter((l, i) => after.slice(0, i + 1).every((x) => x.startsWith('  '))).map((l) => l.trim());
}

/** The demo's output contract: the plan and summary of run 1, then a second run with zero writes. */
function expectDemoOutput(stdout: string): void {
  expect(stdout).toMatch(/^orgsync demo\n {2}emulator {2}http:\/\/127\.0\.0\.1:\d+ {2}\(tenant 2001 "Demo Corp"/);
  const [first, second] = stdout.split('== Run 2: the same data again ==');
  expect(first).toContain('== Run 1: the first sync of the demo data into an empty tenant ==');
  expect(first).toContain('departments create (36)');
  expect(first).toContain('Plan: 402 to create, 0 to adopt, 15 to update, 0 to move, 0 to remove.');
  expect(first).toContain('Summary: 417 writes (positions: 62 create; departments: 36 create; members: 304 create, 15 update)');
  expect(second).toContain('No changes: the platform is in sync with the sources.');
  expect(second).toContain('Summary: 0 writes (positions: none; departments: none; members: none)');
  expect(second).toContain('0 failed, 0 quarantined, 0 warnings');
  expect(stdout).toContain('The second run made 0 writes');
  expect(stdout).toContain('Next: read the demo\'s HR data yourself, then follow "Sync your own tenant" in README.md:\n  npx orgsync sources check --config config/demo/orgsync.yaml\n');
}

describe('orgsync demo', () => {
  it('syncs the demo data into the embedded emulator, then shows a second run with zero writes (exit 0)', async () => {
    const cap = captureContext({});
    expect(await main(['demo'], cap.ctx)).toBe(0);
    expectDemoOutput(cap.out.stdout);
    // Logs (level warn in the demo config) go to stderr: nothing went wrong, so nothing was logged.
    expect(cap.out.stderr).toBe('');
  }, 120_000);

  it('package.json: npm start builds first, then runs the demo', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe('npm run build --silent && node dist/cli.js demo');
  });

  it('npm start exits 0 and its second run reports zero writes (in a copy without dist/, as after npm ci on a fresh clone)', async () => {
    // A copy, so its build neither needs nor touches this checkout's dist/ (other tests run dist/cli.js meanwhile).
    const clone = tempDir('orgsync-fresh-');
    for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(repoRoot, f), join(clone, f));
    for (const d of ['src', 'config', 'tools']) cpSync(join(repoRoot, d), join(clone, d), { recursive: true, filter: (src) => !src.includes(`${sep}var`) });
    // The emulator package (a project reference of the build), without its build output.
    const pkg = join('packages', 'emulator');
    for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(repoRoot, pkg, f), join(clone, pkg, f));
    cpSync(join(repoRoot, pkg, 'src'), join(clone, pkg, 'src'), { recursive: true });
    // node_modules as npm ci makes it for a workspace: the dependencies, and the package linked by name to the copy's folder.
    mkdirSync(join(clone, 'node_modules', '@orgsync'), { recursive: true });
    for (const entry of readdirSync(join(repoRoot, 'node_modules'))) {
      if (entry !== '@orgsync') symlinkSync(join(repoRoot, 'node_modules', entry), join(clone, 'node_modules', entry));
    }
    symlinkSync(join('..', '..', pkg), join(clone, 'node_modules', '@orgsync', 'emulator'), 'dir');
    expect(existsSync(join(clone, 'dist'))).toBe(false);
    const child = spawn('npm', ['start', '--silent'], { cwd: clone, env: { ...process.env, FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, stderr).toBe(0);
    expectDemoOutput(stdout);
    // The "Next:" commands work verbatim there: `npx orgsync` finds the checkout's own bin after the build, and
    // sources check needs no platform key.
    const next = nextCommands(stdout);
    expect(next).toEqual(['npx orgsync sources check --config config/demo/orgsync.yaml']);
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ORGSYNC_')));
    for (const line of next) {
      const r = spawnSync('sh', ['-c', line], { cwd: clone, env, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('source hr (csv): 36 departments, 62 positions, 253 members, 0 quarantined');
    }
    rmSync(clone, { recursive: true, force: true });
  }, 300_000);
});
