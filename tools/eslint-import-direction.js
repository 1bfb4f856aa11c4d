// A local ESLint rule enforcing the import direction of ARCHITECTURE.md between the folders of src/.
// Relative specifiers are resolved against the importing file; bare packages are not checked.
// (A local rule, not eslint-plugin-import-x: that one pulls in a native resolver whose platform bindings break `npm ci` here.)
import { dirname, relative, resolve, sep } from 'node:path';

const SRC = resolve(import.meta.dirname, '..', 'src');

/** The src/ folder ("stage") a path belongs to, or undefined outside src/ or for files directly in src/. */
function stageOf(file) {
  const rel = relative(SRC, file);
  if (rel.startsWith('..') || !rel.includes(sep)) return undefined;
  return rel.split(sep)[0];
}

/** @type {import('eslint').Rule.RuleModule} */
export const importDirectionRule = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports between src/ folders follow ARCHITECTURE.md' },
    schema: [{ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } }],
    messages: { forbidden: 'src/{{from}} may not import from src/{{to}} (allowed: {{allowed}}; see ARCHITECTURE.md).' },
  },
  create(context) {
    const allowedByStage = context.options[0] ?? {};
    const file = context.filename ?? context.getFilename();
    const from = stageOf(file);
    if (!from || !(from in allowedByStage)) return {};
    const allowed = new Set([from, 'shared', ...allowedByStage[from]]);
    const check = (node) => {
      const spec = node?.value;
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const to = stageOf(resolve(dirname(file), spec));
      if (to && !allowed.has(to)) {
        context.report({ node, messageId: 'forbidden', data: { from, to, allowed: [...allowed].join(', ') } });
      }
    };
    return {
      ImportDeclaration: (n) => check(n.source),
      ExportNamedDeclaration: (n) => check(n.source),
      ExportAllDeclaration: (n) => check(n.source),
      ImportExpression: (n) => check(n.source),
    };
  },
};
