// orgsync/no-import-cycle: a local ESLint rule (issue 30 point 7) reporting, on each file of src/ that is part of an
// import cycle, the cycle, as tools/code-shape.mjs finds it (relative imports, re-exports; type-only imports count:
// a cycle of types is still two modules that cannot be read apart). The graph is built once per lint run from the
// files on disk. (A local rule, not import-x/no-cycle: that plugin's native resolver breaks `npm ci` here.)
import { relative, resolve } from 'node:path';
import { importCycles, tsFiles } from './code-shape.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = resolve(ROOT, 'src');

let cyclesByFile;

/** Every cycle of src/, by the repository-relative path of each file in it (computed once per process). */
function cyclesOf(file) {
  if (!cyclesByFile) {
    cyclesByFile = new Map();
    for (const cycle of importCycles(tsFiles(SRC), ROOT)) {
      for (const member of new Set(cycle)) cyclesByFile.set(member, [...(cyclesByFile.get(member) ?? []), cycle]);
    }
  }
  return cyclesByFile.get(relative(ROOT, file).split('\\').join('/')) ?? [];
}

/** @type {import('eslint').Rule.RuleModule} */
export const noImportCycleRule = {
  meta: {
    type: 'problem',
    docs: { description: 'No import cycle among the files of src/ (type-only imports count)' },
    schema: [],
    messages: { cycle: 'import cycle: {{cycle}} (type-only imports count; move what both sides need into a module of its own)' },
  },
  create(context) {
    const file = context.filename ?? context.getFilename();
    return {
      Program(node) {
        for (const cycle of cyclesOf(file)) context.report({ node, loc: { line: 1, column: 0 }, messageId: 'cycle', data: { cycle: cycle.join(' -> ') } });
      },
    };
  },
};
