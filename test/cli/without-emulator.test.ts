/**
 * The sync runs without the emulator package: a copy of the built CLI with its production files and dependencies but
 * no packages/emulator folder (and no node_modules/@orgsync/emulator) runs --version, config validate and plan against
 * a running emulator; `orgsync emulator` and `orgsync demo` there exit 1 with one line.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMULATOR_MISSING_MESSAGE } from '../../src/cli/emulator-door.js';
import { VERSION } from '../../src/cli/version.js';
import { ensureBuilt, repoRoot } from '../helpers/build.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { demoSeed, demoWorkspace } from '../daemon/support.js';
import { tempDir } from '../helpers/temp.js';

let copy = '';
let workspace = '';
let emulator: TestEmulator | undefined;

/** node dist/cli.js of the copy, run from the copy (asynchronously: the emulator answers from this process). */
function cli(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(copy, 'dist', 'cli.js'), ...args], { cwd: copy, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

beforeAll(async () => {
  ensureBuilt();
  copy = tempDir('orgsync-no-emulator-');
  cpSync(join(repoRoot, 'package.json'), join(copy, 'package.json'));
  for (const d of ['dist', 'config']) cpSync(join(repoRoot, d), join(copy, d), { recursive: true });
  // The dependencies, one link each, but not the workspace package: as if packages/emulator had never been there.
  mkdirSync(join(copy, 'node_modules'));
  for (const entry of readdirSync(join(repoRoot, 'node_modules'))) {
    if (entry !== '@orgsync') symlinkSync(join(repoRoot, 'node_modules', entry), join(copy, 'node_modules', entry));
  }
  emulator = await startTestEmulator(demoSeed());
  workspace = demoWorkspace({ url: emulator.url, logLevel: 'warn' });
}, 180_000);

afterAll(async () => {
  await emulator?.close();
  for (const dir of [copy, workspace]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the sync without the emulator package', () => {
  it('the copy has no emulator: no packages/ folder, and the package name does not resolve', () => {
    expect(existsSync(join(copy, 'packages'))).toBe(false);
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', "await import('@orgsync/emulator')"], { cwd: copy, encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("Cannot find package '@orgsync/emulator'");
  });

  it('--version', async () => {
    const r = await cli('--version');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${VERSION}\n`);
  });

  it('config validate', async () => {
    const r = await cli('config', 'validate', '--config', join(workspace, 'orgsync.yaml'));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('plan against the running emulator', async () => {
    const r = await cli('plan', '--config', join(workspace, 'orgsync.yaml'));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('Plan: 402 to create, 0 to adopt, 15 to update, 0 to move, 0 to remove.');
  }, 120_000);

  it('orgsync emulator and orgsync demo exit 1 with one line saying the package is not installed', async () => {
    for (const args of [['emulator', '--port', '0', '--seed', 'config/seed.example.yaml'], ['demo']]) {
      const r = await cli(...args);
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`orgsync: ${EMULATOR_MISSING_MESSAGE}\n`);
    }
    expect(EMULATOR_MISSING_MESSAGE).toBe(
      'the emulator package @orgsync/emulator is not installed (it is not part of a production install); run the commands emulator and demo from a checkout after npm ci and npm run build, or from the image\'s demo target',
    );
  });
});
