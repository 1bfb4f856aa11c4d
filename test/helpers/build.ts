/**
 * The built CLI for tests that run it as users do (node dist/cli.js): runs the root build (tsc -b: the emulator
 * package, a project reference, then the sync; then tools/bundle.mjs, which makes dist/cli.js) when dist/cli.js or
 * the package's dist is missing or older than its sources. .ci/run builds before testing, so there this only checks.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
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

/** Builds when stale; throws when dist/cli.js or the emulator package's dist is still missing. */
export function ensureBuilt(): void {
  if (builtAt(CLI) < newestMtime(join(repoRoot, 'src')) || builtAt(EMULATOR_DIST) < newestMtime(join(repoRoot, 'packages', 'emulator', 'src'))) {
    // tsc still emits when another part of the tree has type errors; what matters here is the two dists.
    spawnSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', join(repoRoot, 'tsconfig.build.json')], { cwd: repoRoot, stdio: 'ignore' });
    spawnSync(process.execPath, [join(repoRoot, 'tools', 'bundle.mjs')], { cwd: repoRoot, stdio: 'ignore' });
  }
  for (const f of [CLI, EMULATOR_DIST]) if (!statSync(f, { throwIfNoEntry: false })?.isFile()) throw new Error(`${f} is missing after npm run build`);
}
