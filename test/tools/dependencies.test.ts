/**
 * Each product lists what it imports: every package the sync's src/ imports is a dependency of the root package.json,
 * every package the emulator's src/ imports is one of packages/emulator/package.json; and the root no longer lists
 * the packages only the emulator uses at runtime (they are not in the sync's production install).
 */
import { builtinModules } from 'node:module';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/build.js';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The npm packages the .ts files under `dir` import (static imports, re-exports, and import() of a literal). */
function importedPackages(dir: string): string[] {
  const found = new Set<string>();
  for (const file of sources(dir)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'([^'.][^']*)'/g)) {
      const spec = m[1]!;
      if (spec.startsWith('node:') || builtinModules.includes(spec)) continue;
      found.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  }
  return [...found].sort();
}

const pkg = (path: string) => JSON.parse(readFileSync(join(repoRoot, path), 'utf8')) as { dependencies: Record<string, string>; devDependencies?: Record<string, string> };

describe('dependencies', () => {
  it("the sync's imports are dependencies of the root package.json", () => {
    const deps = Object.keys(pkg('package.json').dependencies);
    expect(importedPackages(join(repoRoot, 'src')).filter((p) => !deps.includes(p))).toEqual([]);
  });

  it("the emulator's imports are dependencies of its own package.json", () => {
    const deps = Object.keys(pkg('packages/emulator/package.json').dependencies);
    expect(importedPackages(join(repoRoot, 'packages/emulator/src')).filter((p) => !deps.includes(p))).toEqual([]);
  });

  it("the root's runtime dependencies hold nothing only the emulator uses", () => {
    const syncImports = importedPackages(join(repoRoot, 'src'));
    const emulatorOnly = importedPackages(join(repoRoot, 'packages/emulator/src')).filter((p) => !syncImports.includes(p));
    expect(emulatorOnly).toEqual(expect.arrayContaining(['@fastify/formbody', '@fastify/multipart', 'ajv', 'fastify', 'pdf-lib', 'unpdf']));
    expect(emulatorOnly.filter((p) => p in pkg('package.json').dependencies)).toEqual([]);
  });
});
