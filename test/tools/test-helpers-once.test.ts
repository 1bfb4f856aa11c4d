/**
 * Issue 30 point 6, kept so: the test files share one in-process CLI runner (test/helpers/cli.ts), one CSV fixture
 * writer (test/helpers/fixtures.ts) and make temporary folders only through tempDir() (test/helpers/temp.ts, whose
 * folders are removed after each file). Read with the TypeScript parser, so comments and strings do not count.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The files allowed to do what the others may not, with the reason. */
const ALLOWED = {
  mkdtemp: ['test/helpers/temp.ts', 'test/global-setup.ts'], // the helper itself; the suite's private TMPDIR
  cliRunner: ['test/helpers/cli.ts'],
  csvWriter: ['test/helpers/fixtures.ts'],
};

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'fixtures' && name !== 'node_modules') out.push(...testFiles(path));
    } else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

const calleeName = (call: ts.CallExpression | ts.NewExpression): string | undefined => {
  const e = call.expression;
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  return undefined;
};

/** The name a function node is known by: its own, or the variable / property it is assigned to. */
function declaredName(node: ts.Node): string | undefined {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name) return node.name.getText();
  if ((ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && ts.isVariableDeclaration(node.parent)) return node.parent.name.getText();
  return undefined;
}

/** The local names `main` of src/cli/main.ts is imported under (static imports). */
function mainImports(source: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const st of source.statements) {
    if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier) || !st.moduleSpecifier.text.endsWith('/cli/main.js')) continue;
    const bindings = st.importClause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings)) for (const el of bindings.elements) if ((el.propertyName ?? el.name).text === 'main') names.add(el.name.text);
  }
  return names;
}

/** A CSV header line written by hand: `'id,name,email'` as the first element of an array joined into a file. */
const isCsvHeaderArray = (node: ts.Expression): boolean =>
  ts.isArrayLiteralExpression(node) && node.elements.length > 0 && ts.isStringLiteral(node.elements[0]!) && /^[\w ]+(,[\w ]+)+$/.test(node.elements[0].text);

/** What a test file does that the shared helpers are for: one line per finding, `file:line what (use instead)`. */
function helperFindings(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) => found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1} ${what}`);
  const main = mainImports(source);
  const enclosingNames: string[] = [];
  const visit = (node: ts.Node): void => {
    const name = declaredName(node);
    if (name !== undefined) enclosingNames.push(name);
    if (ts.isCallExpression(node)) {
      const callee = calleeName(node);
      if ((callee === 'mkdtemp' || callee === 'mkdtempSync') && !ALLOWED.mkdtemp.includes(file)) {
        at(node, `${callee}() makes a temporary folder nobody removes if the test fails first (use tempDir() of test/helpers/temp.ts)`);
      }
      if (callee !== undefined && ts.isIdentifier(node.expression) && main.has(callee) && enclosingNames.length > 0 && !ALLOWED.cliRunner.includes(file)) {
        at(node, `${enclosingNames.at(-1)}() is a CLI runner of its own (use cli() / runCli() / captureContext() of test/helpers/cli.ts)`);
      }
      if (callee === 'writeFileSync' && !ALLOWED.csvWriter.includes(file)) {
        const content = node.arguments[1];
        if (content && ts.isBinaryExpression(content) && ts.isCallExpression(content.left) && ts.isPropertyAccessExpression(content.left.expression)) {
          if (content.left.expression.name.text === 'join' && isCsvHeaderArray(content.left.expression.expression)) {
            at(node, 'writes a CSV file by hand (use writeCsv() / writeStaffCsv() of test/helpers/fixtures.ts)');
          }
        }
      }
    }
    if (ts.isNewExpression(node) && ['Writable', 'PassThrough'].includes(calleeName(node) ?? '') && main.size > 0 && !ALLOWED.cliRunner.includes(file)) {
      at(node, `captures the CLI's output with a stream of its own (use test/helpers/cli.ts)`);
    }
    if (name === 'writeCsv' && !ALLOWED.csvWriter.includes(file)) at(node, 'writeCsv() of its own (use writeCsv() of test/helpers/fixtures.ts)');
    ts.forEachChild(node, visit);
    if (name !== undefined) enclosingNames.pop();
  };
  visit(source);
  return found;
}

describe('test helpers once (issue 30 point 6)', () => {
  it('no test file makes temporary folders directly, runs the CLI with a runner of its own or writes CSV by hand', () => {
    const findings = testFiles(join(root, 'test')).flatMap((path) => {
      const file = relative(root, path);
      return helperFindings(file, readFileSync(path, 'utf8'));
    });
    expect(findings).toEqual([]);
  });

  it('finds a direct mkdtemp, in either form, but not in the helper itself', () => {
    const code = "import { mkdtempSync } from 'node:fs';\nimport fs from 'node:fs/promises';\nconst a = mkdtempSync('/tmp/orgsync-');\nconst b = await fs.mkdtemp('/tmp/orgsync-');\n";
    expect(helperFindings('test/x/a.test.ts', code)).toEqual([
      'test/x/a.test.ts:3 mkdtempSync() makes a temporary folder nobody removes if the test fails first (use tempDir() of test/helpers/temp.ts)',
      'test/x/a.test.ts:4 mkdtemp() makes a temporary folder nobody removes if the test fails first (use tempDir() of test/helpers/temp.ts)',
    ]);
    expect(helperFindings('test/helpers/temp.ts', code)).toEqual([]);
  });

  it('finds a CLI runner of its own: a named function around main, or output captured by hand', () => {
    const runner = `import { PassThrough } from 'node:stream';
import { main as entry } from '../../src/cli/main.js';
async function run(args: string[]) {
  const stdout = new PassThrough();
  return entry(args, { env: {}, stdout, stderr: stdout, shutdownSignal: new AbortController().signal, isTTY: false });
}
`;
    expect(helperFindings('test/x/b.test.ts', runner)).toEqual([
      "test/x/b.test.ts:4 captures the CLI's output with a stream of its own (use test/helpers/cli.ts)",
      'test/x/b.test.ts:5 run() is a CLI runner of its own (use cli() / runCli() / captureContext() of test/helpers/cli.ts)',
    ]);
    expect(helperFindings('test/helpers/cli.ts', runner)).toEqual([]);
    // A daemon driven in a test's own body with the shared captured context is not a runner.
    const driven = "import { main } from '../../src/cli/main.js';\nimport { captureContext } from '../helpers/cli.js';\nit('runs', async () => {\n  const cap = captureContext();\n  await main(['daemon'], cap.ctx);\n});\n";
    expect(helperFindings('test/x/c.test.ts', driven)).toEqual([]);
  });

  it('finds a writeCsv of its own and a CSV file joined by hand', () => {
    const code = "const writeCsv = (n: number) => n;\nwriteFileSync(join(dir, 'staff.csv'), ['id,name,email', ...rows].join('\\n') + '\\n');\nwriteFileSync(file, ['a: 1', 'b: 2'].join('\\n') + '\\n');\n";
    expect(helperFindings('test/x/d.test.ts', code)).toEqual([
      'test/x/d.test.ts:1 writeCsv() of its own (use writeCsv() of test/helpers/fixtures.ts)',
      'test/x/d.test.ts:2 writes a CSV file by hand (use writeCsv() / writeStaffCsv() of test/helpers/fixtures.ts)',
    ]);
  });
});
