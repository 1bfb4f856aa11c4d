import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** orgsync's installed package: its folder (where package.json and config/ are) and its version. */
export interface InstalledPackage {
  root: string;
  version: string;
}

let installed: InstalledPackage | undefined;

/**
 * The installed package, found upwards from `from` (this module by default, read once per process): it sits at a
 * different depth in src/, in tsc's dist/ and in the bundle (dist/cli.js, dist/chunks/), so no fixed `../..` fits
 * all three. The manifest read to recognise the folder is the one the version comes from.
 */
export function installedPackage(from?: string): InstalledPackage {
  if (from === undefined) return (installed ??= findPackage(import.meta.url));
  return findPackage(from);
}

function findPackage(from: string): InstalledPackage {
  for (let dir = dirname(fileURLToPath(from)); ; dir = dirname(dir)) {
    const manifest = readManifest(join(dir, 'package.json'));
    if (manifest?.name === 'orgsync') return { root: dir, version: String(manifest.version) };
    if (dirname(dir) === dir) throw new Error(`orgsync's package.json was not found above ${fileURLToPath(from)}`);
  }
}

function readManifest(file: string): { name?: string; version?: string } | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
  } catch {
    return undefined;
  }
}
