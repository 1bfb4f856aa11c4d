// orgsync/import-direction: a local ESLint rule for the import direction drawn in docs/architecture.md.
//   1. Between the folders ("stages") of src/: each may import itself, shared, and the folders its entry allows.
//   2. The package boundary: a file of a workspace package (packages/<name>/) imports nothing outside its package;
//      src/ imports no package by a relative path, and names the package only in its one door (the dynamic import()
//      in `door`), so no other command loads it and the sync runs without it.
// Relative specifiers are resolved against the importing file; bare specifiers are checked only against the packages'
// names. (A local rule, not eslint-plugin-import-x: that one pulls in a native resolver whose platform bindings break
// `npm ci` here.)
import { dirname, relative, resolve, sep } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = resolve(ROOT, 'src');

/** The src/ folder ("stage") a path belongs to, or undefined outside src/ or for files directly in src/. */
function stageOf(file) {
  const rel = relative(SRC, file);
  if (rel.startsWith('..') || !rel.includes(sep)) return undefined;
  return rel.split(sep)[0];
}

/** True when `file` is `dir` or inside it. */
function inside(file, dir) {
  const rel = relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep));
}

/** The repository-relative, slash-separated form of a path (for messages). */
function repoPath(file) {
  return relative(ROOT, file).split(sep).join('/');
}

/** @type {import('eslint').Rule.RuleModule} */
export const importDirectionRule = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports between src/ folders and across the workspace packages follow docs/architecture.md' },
    schema: [
      { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
      {
        type: 'object',
        properties: {
          // Workspace packages: their folder (repository-relative) -> their package name.
          packages: { type: 'object', additionalProperties: { type: 'string' } },
          // The one src/ file that may load a package, by a dynamic import().
          door: { type: 'string' },
        },
        additionalProperties: false,
      },
    ],
    messages: {
      forbidden: 'src/{{from}} may not import from src/{{to}} (allowed: {{allowed}}; see docs/architecture.md).',
      leavesPackage: '{{pkg}} may not import from outside its package ({{to}}): it shares nothing with the sync (see docs/architecture.md).',
      intoPackage: 'src/ may not import the {{pkg}} package ({{name}}) except by a dynamic import() in {{door}} (see docs/architecture.md).',
    },
  },
  create(context) {
    const allowedByStage = context.options[0] ?? {};
    const { packages = {}, door } = context.options[1] ?? {};
    const file = context.filename ?? context.getFilename();
    const packageDirs = Object.keys(packages).map((dir) => ({ dir: resolve(ROOT, dir), rel: dir, name: packages[dir] }));
    const ownPackage = packageDirs.find((p) => inside(file, p.dir));
    const inSrc = inside(file, SRC);
    const isDoor = door !== undefined && resolve(ROOT, door) === file;
    const from = stageOf(file);
    const allowed = from && from in allowedByStage ? new Set([from, 'shared', ...allowedByStage[from]]) : undefined;

    const check = (node, dynamic) => {
      const spec = node?.value;
      if (typeof spec !== 'string') return;
      if (!spec.startsWith('.')) {
        if (!inSrc) return;
        const pkg = packageDirs.find((p) => spec === p.name || spec.startsWith(`${p.name}/`));
        if (pkg && !(isDoor && dynamic)) context.report({ node, messageId: 'intoPackage', data: { pkg: pkg.rel, name: pkg.name, door: door ?? '(none)' } });
        return;
      }
      const target = resolve(dirname(file), spec);
      if (ownPackage) {
        if (!inside(target, ownPackage.dir)) context.report({ node, messageId: 'leavesPackage', data: { pkg: ownPackage.rel, to: repoPath(target) } });
        return;
      }
      if (inSrc) {
        const pkg = packageDirs.find((p) => inside(target, p.dir));
        if (pkg) {
          context.report({ node, messageId: 'intoPackage', data: { pkg: pkg.rel, name: pkg.name, door: door ?? '(none)' } });
          return;
        }
      }
      if (!allowed) return;
      const to = stageOf(target);
      if (to && !allowed.has(to)) {
        context.report({ node, messageId: 'forbidden', data: { from, to, allowed: [...allowed].join(', ') } });
      }
    };
    return {
      ImportDeclaration: (n) => check(n.source, false),
      ExportNamedDeclaration: (n) => check(n.source, false),
      ExportAllDeclaration: (n) => check(n.source, false),
      ImportExpression: (n) => check(n.source, true),
    };
  },
};
