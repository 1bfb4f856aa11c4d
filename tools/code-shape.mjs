// Measures the shape issue 30 keeps true: function length (lines from the declaration's first line to its closing
// brace) and import cycles among the files of a folder. Used by test/tools/code-shape.test.ts and runnable by hand:
//   node tools/code-shape.mjs            # every function over its limit, every cycle
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** Every .ts file below `dir`, sorted. */
export function tsFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function functionName(node, source) {
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(source);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  if (parent && ts.isCallExpression(parent)) return `<callback of ${parent.expression.getText(source).slice(0, 40)}>`;
  return '<anonymous>';
}

/** Functions of `file` longer than `limit` lines: { file, name, line, lines }. */
export function longFunctions(file, limit, root = process.cwd()) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    if (ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) || ts.isMethodDeclaration(node) || ts.isConstructorDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) {
      if (node.body) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
        const lines = end - start + 1;
        if (lines > limit) found.push({ file: relative(root, file), name: functionName(node, source), line: start, lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The relative imports (static, re-exports and dynamic) of a file, resolved to .ts paths. */
function localImports(file) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out = [];
  // Type-only imports count too: a cycle of types is still two modules that cannot be read apart.
  const add = (spec) => {
    if (!spec.startsWith('.')) return;
    out.push(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      add(statement.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      add(statement.moduleSpecifier.text);
    }
  }
  return out;
}

/** Import cycles among `files`, each as a path list. */
export function importCycles(files, root = process.cwd()) {
  const graph = new Map(files.map((f) => [f, localImports(f).filter((t) => files.includes(t))]));
  const cycles = [];
  const state = new Map();
  const stack = [];
  const visit = (file) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].map((f) => relative(root, f)));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return cycles;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = process.cwd();
  const long = [...tsFiles(join(root, 'src')).flatMap((f) => longFunctions(f, 80, root)), ...tsFiles(join(root, 'packages/emulator/src')).flatMap((f) => longFunctions(f, 100, root))];
  for (const f of long.sort((a, b) => b.lines - a.lines)) console.log(`${f.lines}\t${f.file}:${f.line}\t${f.name}`);
  for (const c of importCycles(tsFiles(join(root, 'src')), root)) console.log(`cycle: ${c.join(' -> ')}`);
}
