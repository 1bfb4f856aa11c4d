/**
 * Temporary folders of the tests: `tempDir()` makes one (named orgsync-*, in the suite's private temp dir) and
 * registers it, and test/setup.ts removes every registered folder after each test file, so no test leaves one behind
 * (test/global-setup.ts fails the run if any orgsync-* entry is left).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made = new Set<string>();

/** A new empty folder `<parent>/<prefix>XXXXXX` (parent: the temp dir), removed after the test file at the latest. */
export function tempDir(prefix = 'orgsync-', parent = tmpdir()): string {
  const dir = mkdtempSync(join(parent, prefix));
  made.add(dir);
  return dir;
}

/** Removes every folder tempDir() made (called by test/setup.ts after each test file). */
export function removeTempDirs(): void {
  for (const dir of made) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  made.clear();
}
