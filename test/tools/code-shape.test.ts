/**
 * Issue 30 point 7, kept true by the build: no function in src/ over 80 lines (100 in packages/emulator/src), counted
 * from the function's first line to its closing brace, and no import cycle among the files of src/ (type-only imports
 * count). Measured by tools/code-shape.mjs (`node tools/code-shape.mjs` lists the same by hand); `npm run lint` fails
 * on the same through max-lines-per-function, which counts the same lines, and orgsync/no-import-cycle.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { importCycles, longFunctions, tsFiles } from '../../tools/code-shape.mjs';
import { tempDir } from '../helpers/temp.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The folders held to a length limit, with theirs. */
const LIMITS = [
  { dir: 'src', limit: 80 },
  { dir: 'packages/emulator/src', limit: 100 },
];

describe('code shape (issue 30 point 7)', () => {
  it('no function in src/ is over 80 lines, none in packages/emulator/src over 100', () => {
    const long = LIMITS.flatMap(({ dir, limit }) =>
      tsFiles(join(root, dir))
        .flatMap((file) => longFunctions(file, limit, root))
        .map((f) => `${f.file}:${f.line} ${f.name} ${f.lines} lines (limit ${limit})`),
    );
    expect(long).toEqual([]);
  });

  it('no import cycle among the files of src/ (type-only imports count)', () => {
    expect(importCycles(tsFiles(join(root, 'src')), root).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('measures from the first line to the closing brace, names each kind of function, and finds a cycle of types', () => {
    const dir = tempDir('orgsync-shape-');
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    // five: its line, 3 lines of body and the brace (the TSDoc line above does not count); m: 4; arrow and callback: 6.
    const code = `/** doc */\nexport function five(): void {\n${body(3)}\n}\nclass K {\n  m(): void {\n${body(2)}\n  }\n}\nexport const arrow = (): void => {\n${body(4)}\n};\n[1].forEach(() => {\n${body(4)}\n});\nexport const k = K;\n`;
    writeFileSync(join(dir, 'a.ts'), code);
    expect(longFunctions(join(dir, 'a.ts'), 3, dir)).toEqual([
      { file: 'a.ts', name: 'five', line: 2, lines: 5 },
      { file: 'a.ts', name: 'm', line: 8, lines: 4 },
      { file: 'a.ts', name: 'arrow', line: 13, lines: 6 },
      { file: 'a.ts', name: '<callback of [1].forEach>', line: 19, lines: 6 },
    ]);
    expect(longFunctions(join(dir, 'a.ts'), 6, dir)).toEqual([]);
    writeFileSync(join(dir, 'b.ts'), "import type { C } from './c.js';\nexport type B = C;\n");
    writeFileSync(join(dir, 'c.ts'), "import { type B } from './b.js';\nexport type C = { b?: B };\n");
    expect(importCycles(tsFiles(dir), dir)).toEqual([['b.ts', 'c.ts', 'b.ts']]);
  });

  it('the lint rule counts the same lines as this test', async () => {
    const eslint = new ESLint({ cwd: root });
    // A function of exactly `lines` lines: its first line, lines - 2 statements, the closing brace.
    const at = (lines: number) => `export function f(): void {\n${Array.from({ length: lines - 2 }, (_, i) => `  console.log(${i});`).join('\n')}\n}\n`;
    const messages = async (file: string, code: string) =>
      ((await eslint.lintText(code, { filePath: join(root, file) }))[0]?.messages ?? []).filter((m) => m.ruleId === 'max-lines-per-function').map((m) => m.message);
    // Exactly at the limit passes, one line more fails, in each folder with its own limit.
    expect(await messages('src/planner/x.ts', at(80))).toEqual([]);
    expect(await messages('src/planner/x.ts', at(81))).toEqual(["Function 'f' has too many lines (81). Maximum allowed is 80."]);
    expect(await messages('packages/emulator/src/core/x.ts', at(100))).toEqual([]);
    expect(await messages('packages/emulator/src/core/x.ts', at(101))).toEqual(["Function 'f' has too many lines (101). Maximum allowed is 100."]);
    const dir = tempDir('orgsync-shape-');
    writeFileSync(join(dir, 'f.ts'), at(81));
    expect(longFunctions(join(dir, 'f.ts'), 80, dir)).toEqual([{ file: 'f.ts', name: 'f', line: 1, lines: 81 }]);
  });

  it('the lint rule orgsync/no-import-cycle reports each cycle on each file in it, and nothing elsewhere', async () => {
    const cycles = importCycles(tsFiles(join(root, 'src')), root);
    const files = [...new Set(cycles.flat()), 'src/shared/clock.ts'];
    const results = await new ESLint({ cwd: root }).lintFiles(files.map((f) => join(root, f)));
    const reported = results.map((r) => r.messages.filter((m) => m.ruleId === 'orgsync/no-import-cycle').map((m) => m.message));
    const expected = files.map((f) => cycles.filter((c) => c.includes(f)).map((c) => `import cycle: ${c.join(' -> ')} (type-only imports count; move what both sides need into a module of its own)`));
    expect(reported).toEqual(expected);
  });
});
