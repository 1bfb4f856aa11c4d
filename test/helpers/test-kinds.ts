/**
 * Which test files start processes (the built CLI, slapd, helm, promtool, Chromium, npm, a shell) and which run
 * in-process only: `npm run test:quick` (vitest --mode quick, see vitest.config.ts) runs the second kind, the inner
 * loop; `npm test` and CI run both. A file is of the first kind when it or a module it imports, directly or through
 * others of the repository, imports node:child_process or playwright-core. Decided from the sources at each run, so a
 * new test file needs no list: one that spawns anything is left out of the quick run by itself.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Modules whose import means the file starts processes. */
const PROCESS_MODULES = new Set(['node:child_process', 'child_process', 'playwright-core']);
/** Bare imports that stand for a file of the repository (vitest.config.ts resolves them so). */
const ALIASES: Record<string, string> = { '@orgsync/emulator': 'packages/emulator/src/index.ts' };
const IMPORT = /\b(?:import|export)\s+(?:type\s+)?(?:[^'"`;]*?\sfrom\s*)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The `.test.ts` files under the folders the suite includes (test/, packages/NAME/test/), relative to `root`. */
export function testFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      if (name === 'node_modules' || name === 'fixtures') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.test.ts')) out.push(relative(root, path));
    }
  };
  walk(join(root, 'test'));
  const packages = join(root, 'packages');
  for (const pkg of existsSync(packages) ? readdirSync(packages).sort() : []) if (existsSync(join(packages, pkg, 'test'))) walk(join(packages, pkg, 'test'));
  return out;
}

/** The repository file an import specifier names (`./x.js` is `./x.ts` in the sources), or undefined. */
function resolveImport(root: string, from: string, spec: string): string | undefined {
  const target = ALIASES[spec] !== undefined ? join(root, ALIASES[spec]) : spec.startsWith('.') ? resolve(dirname(from), spec) : undefined;
  if (target === undefined) return undefined;
  for (const candidate of [target.replace(/\.js$/, '.ts'), target, `${target}.ts`, join(target, 'index.ts')]) {
    if (candidate.endsWith('.ts') && existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** Classifies test files, remembering what it read: one instance per question. */
export class TestKinds {
  /** Per file: whether it imports a process module itself, and the repository files it imports. */
  private readonly read = new Map<string, { direct: boolean; imports: string[] }>();

  constructor(private readonly root: string) {}

  /** Whether `file` (absolute, or relative to the root) starts processes, itself or through what it imports. */
  startsProcesses(file: string): boolean {
    const seen = new Set<string>();
    const queue = [resolve(this.root, file)];
    while (queue.length > 0) {
      const next = queue.pop()!;
      if (seen.has(next)) continue;
      seen.add(next);
      const { direct, imports } = this.imports(next);
      if (direct) return true;
      queue.push(...imports);
    }
    return false;
  }

  private imports(file: string): { direct: boolean; imports: string[] } {
    let entry = this.read.get(file);
    if (entry === undefined) {
      entry = { direct: false, imports: [] };
      for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const spec = (m[1] ?? m[2])!;
        if (PROCESS_MODULES.has(spec)) entry.direct = true;
        const target = resolveImport(this.root, file, spec);
        if (target !== undefined) entry.imports.push(target);
      }
      this.read.set(file, entry);
    }
    return entry;
  }
}

/** The test files (relative to `root`) that start processes: what `npm run test:quick` leaves out. */
export function processTestFiles(root: string): string[] {
  const kinds = new TestKinds(root);
  return testFiles(root).filter((f) => kinds.startsProcesses(f));
}
