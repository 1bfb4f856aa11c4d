/**
 * The suite runs with its own temp dir (TMPDIR), so what it leaves behind can be told apart from other programs'
 * files. After the run, an orgsync-* entry left there fails the run, naming it; then the dir is removed.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const previous = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), 'vitest-tmp-'));
  process.env.TMPDIR = dir;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    const left = readdirSync(dir).filter((name) => name.startsWith('orgsync-'));
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    if (left.length > 0) {
      // vitest reports an error thrown here but still exits 0: set the exit code as well.
      process.exitCode = 1;
      throw new Error(`the test suite left ${left.length} temporary folder(s) behind: ${left.join(', ')} (make them with tempDir() from test/helpers/temp.ts, or remove them in afterEach/afterAll)`);
    }
  };
}
