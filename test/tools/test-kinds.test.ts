/**
 * Issue 46 point 3: `npm run test:quick` leaves out exactly the test files that start processes, found from their
 * imports (test/helpers/test-kinds.ts), so a new test file is sorted without a list to keep.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { processTestFiles, TestKinds, testFiles } from '../helpers/test-kinds.js';
import { tempDir } from '../helpers/temp.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('test kinds', () => {
  it('sorts the suite: files that spawn, directly or through a helper, are process tests; the rest in-process', () => {
    const kinds = new TestKinds(root);
    // Directly (node:child_process), through test/helpers/build.ts, slapd.ts, test/faults/process.ts, playwright-core.
    for (const f of ['test/cli/closed-pipe-bin.test.ts', 'test/cli/large-plan.test.ts', 'test/sources/ldap.test.ts', 'test/faults/state-db.test.ts', 'test/planner/report-html.test.ts']) {
      expect(kinds.startsProcesses(f), f).toBe(true);
    }
    for (const f of ['test/cli/closed-pipe.test.ts', 'test/shared/errors-doc.test.ts', 'test/e2e/cli-plan-sync.test.ts', 'packages/emulator/test/org/lists.test.ts']) {
      expect(kinds.startsProcesses(f), f).toBe(false);
    }
    const all = testFiles(root);
    const processes = processTestFiles(root);
    expect(all).toContain('packages/emulator/test/org/lists.test.ts');
    expect(processes.every((f) => all.includes(f))).toBe(true);
    // Most of the suite is in-process: the quick run is the larger part, not an empty one.
    expect(processes.length).toBeGreaterThan(10);
    expect(all.length - processes.length).toBeGreaterThan(processes.length * 2);
  });

  it('follows imports through helpers, .js names of .ts files, index files, dynamic imports and cycles', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'test', 'lib'), { recursive: true });
    const file = (name: string, text: string) => writeFileSync(join(dir, 'test', name), text);
    file('spawner.ts', "import { spawn } from 'node:child_process';\nexport const s = spawn;\n");
    file('lib/index.ts', "export { s } from '../spawner.js';\n");
    file('cycle-a.ts', "import { b } from './cycle-b.js';\nexport const a = 1;\n");
    file('cycle-b.ts', "import { a } from './cycle-a.js';\nexport const b = a;\nexport const later = () => import('./lib');\n");
    file('pure.ts', "import { join } from 'node:path';\nimport type { Foo } from './types.js';\nexport const p = join;\n");
    file('uses-lib.test.ts', "import { s } from './lib/index.js';\n");
    file('uses-cycle.test.ts', "import { a } from './cycle-a.js';\n");
    file('pure.test.ts', "import { p } from './pure.js';\nimport { describe } from 'vitest';\n");
    file('browser.test.ts', "import { chromium } from 'playwright-core';\n");
    const kinds = new TestKinds(dir);
    expect(kinds.startsProcesses('test/uses-lib.test.ts')).toBe(true);
    expect(kinds.startsProcesses('test/uses-cycle.test.ts')).toBe(true);
    expect(kinds.startsProcesses('test/browser.test.ts')).toBe(true);
    expect(kinds.startsProcesses('test/pure.test.ts')).toBe(false);
    expect(processTestFiles(dir)).toEqual(['test/browser.test.ts', 'test/uses-cycle.test.ts', 'test/uses-lib.test.ts']);
  });
});
