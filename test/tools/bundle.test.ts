/**
 * The `orgsync` bin is a bundle (tools/bundle.mjs, issue 31): dist/cli.js and dist/chunks/ hold the sync's code and
 * the packages it inlines, so a run loads a handful of scripts instead of about 430 modules. These tests keep it so:
 * what a real command loads as ES modules, that the scripts stay ASCII (V8 keeps a script with one non-ASCII
 * character at two bytes a character), and that the package folder is found from any depth.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { installedPackage } from '../../src/app/package-root.js';
import { CLI, ensureBuilt, repoRoot } from '../helpers/build.js';
import { tempDir } from '../helpers/temp.js';

const CHUNKS = join(repoRoot, 'dist', 'chunks');

/** The ES modules `node dist/cli.js ...args` loads, as URLs relative to the checkout (node: builtins as they are). */
function modulesLoadedBy(args: string[]): string[] {
  const dir = tempDir('orgsync-bundle-');
  const log = join(dir, 'loaded.txt');
  writeFileSync(join(dir, 'hooks.mjs'), `import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, url + '\\n'); return next(url, context); }\n`);
  writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`);
  writeFileSync(log, '');
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(join(dir, 'register.mjs')).href, CLI, ...args], { cwd: repoRoot, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  const root = pathToFileURL(repoRoot).href + '/';
  return readFileSync(log, 'utf8').split('\n').filter(Boolean).map((u) => u.replace(root, ''));
}

describe('the bundled bin (dist/cli.js)', () => {
  beforeAll(() => ensureBuilt(), 600_000);

  it('reads a CSV source loading only the bundle and the packages left outside it', () => {
    const loaded = modulesLoadedBy(['sources', 'check', '--config', 'config/demo/orgsync.yaml']);
    expect(loaded[0]).toBe('dist/cli.js');
    const outside = loaded.filter((u) => !u.startsWith('node:') && u !== 'dist/cli.js' && !u.startsWith('dist/chunks/'));
    // CommonJS packages left outside (tools/bundle.mjs says why): an ES import sees their entry files only.
    expect(outside.sort()).toEqual(['node_modules/better-sqlite3/lib/index.js', 'node_modules/pino/pino.js']);
    expect(loaded.filter((u) => u.startsWith('dist/chunks/')).length).toBeLessThanOrEqual(readdirSync(CHUNKS).length);
  });

  it('is ASCII, so V8 keeps its text at one byte a character', () => {
    for (const file of [CLI, ...readdirSync(CHUNKS).map((f) => join(CHUNKS, f))]) {
      const bytes = readFileSync(file);
      const at = bytes.findIndex((b) => b > 0x7f);
      expect(at === -1 ? 'ascii' : `${file}: non-ASCII at byte ${at}: ${JSON.stringify(bytes.subarray(Math.max(0, at - 40), at + 10).toString('utf8'))}`).toBe('ascii');
    }
  });
});

describe('installedPackage', () => {
  it('finds the folder of orgsync\'s package.json from a module at any depth, with its version', () => {
    const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
    expect(installedPackage()).toEqual({ root: repoRoot, version });
    expect(installedPackage(pathToFileURL(join(repoRoot, 'dist', 'chunks', 'x.js')).href).root).toBe(repoRoot);
    // The emulator's package.json on the way up is another package's: it goes on past it.
    expect(installedPackage(pathToFileURL(join(repoRoot, 'packages', 'emulator', 'dist', 'index.js')).href).root).toBe(repoRoot);
  });

  it('names the module it searched from when there is none above it', () => {
    const dir = tempDir('orgsync-noroot-');
    expect(() => installedPackage(pathToFileURL(join(dir, 'a', 'b.js')).href)).toThrow(`orgsync's package.json was not found above ${join(dir, 'a', 'b.js')}`);
  });
});
