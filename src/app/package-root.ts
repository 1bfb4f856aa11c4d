import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The installed package's folder (where its package.json and config/ are), found upwards from this module: it sits
 * at a different depth in src/, in tsc's dist/ and in the bundle (dist/cli.js, dist/chunks/), so no fixed `../..`
 * fits all three.
 */
export function packageRoot(from: string = import.meta.url): string {
  for (let dir = dirname(fileURLToPath(from)); ; dir = dirname(dir)) {
    if (packageName(join(dir, 'package.json')) === 'orgsync') return dir;
    if (dirname(dir) === dir) throw new Error(`orgsync's package.json was not found above ${fileURLToPath(from)}`);
  }
}

function packageName(file: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name;
  } catch {
    return undefined;
  }
}
