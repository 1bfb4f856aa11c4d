/**
 * The built CLI for tests that run it as users do (node dist/cli.js): runs the root build (tsc -b: the emulator
 * package, a project reference, then the sync; then tools/bundle.mjs, which makes dist/cli.js) when dist/cli.js or
 * the package's dist is missing or older than its sources. .ci/run builds before testing, so there this only checks.
 * Test files run in several processes at once: the build is done under a lock by the first that finds it stale, the
 * others wait and find it fresh (two builds at once would replace dist/chunks under a CLI another file runs).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const repoRoot = resolve(import.meta.dirname, '../..');
export const CLI = join(repoRoot, 'dist', 'cli.js');
export const EMULATOR_DIST = join(repoRoot, 'packages', 'emulator', 'dist', 'index.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

function builtAt(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function stale(): boolean {
  return builtAt(CLI) < newestMtime(join(repoRoot, 'src')) || builtAt(EMULATOR_DIST) < newestMtime(join(repoRoot, 'packages', 'emulator', 'src'));
}

/** The lock of the build (a folder: mkdir is atomic); one older than a build can take is left from a killed run. */
const BUILD_LOCK = join(repoRoot, 'node_modules', '.cache', 'orgsync-test-build.lock');
const BUILD_LOCK_STALE_MS = 10 * 60_000;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `fn` holding the build lock, waiting for another process's build to end first. */
function underBuildLock(fn: () => void): void {
  mkdirSync(join(BUILD_LOCK, '..'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(BUILD_LOCK);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const since = statSync(BUILD_LOCK, { throwIfNoEntry: false })?.mtimeMs;
      if (since !== undefined && Date.now() - since > BUILD_LOCK_STALE_MS) rmSync(BUILD_LOCK, { recursive: true, force: true });
      else sleepSync(200);
    }
  }
  try {
    fn();
  } finally {
    rmSync(BUILD_LOCK, { recursive: true, force: true });
  }
}

/** Builds when stale; throws when dist/cli.js or the emulator package's dist is still missing. */
export function ensureBuilt(): void {
  if (stale()) {
    underBuildLock(() => {
      // Another process may have built while this one waited.
      if (!stale()) return;
      // tsc still emits when another part of the tree has type errors; what matters here is the two dists.
      spawnSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', join(repoRoot, 'tsconfig.build.json')], { cwd: repoRoot, stdio: 'ignore' });
      spawnSync(process.execPath, [join(repoRoot, 'tools', 'bundle.mjs')], { cwd: repoRoot, stdio: 'ignore' });
    });
  }
  for (const f of [CLI, EMULATOR_DIST]) if (!statSync(f, { throwIfNoEntry: false })?.isFile()) throw new Error(`${f} is missing after npm run build`);
}
