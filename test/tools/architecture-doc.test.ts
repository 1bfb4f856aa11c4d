/** docs/architecture.md is drawn from the code: its import map is the one eslint.config.js configures. */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const doc = readFileSync(`${root}docs/architecture.md`, 'utf8');
const config = (await import(new URL('../../eslint.config.js', import.meta.url).href)) as {
  importDirection: Record<string, string[]>;
  packageBoundary: { packages: Record<string, string>; door: string };
};

describe('docs/architecture.md', () => {
  it('draws the import map of eslint.config.js, row by row', () => {
    const section = doc.slice(doc.indexOf('## The import map'), doc.indexOf('## The package boundary'));
    const rows = [...section.matchAll(/^\| `([a-z]+)` \| ([^|]+) \|$/gm)].map((m) => [m[1]!, m[2]!.trim() === '(nothing else)' ? [] : m[2]!.trim().split(', ')]);
    expect(Object.fromEntries(rows)).toEqual(config.importDirection);
  });

  it('names the local rule, the package boundary and its one door as they are', () => {
    expect(doc).toContain('`orgsync/import-direction` (`tools/eslint-import-direction.js`)');
    for (const [dir, name] of Object.entries(config.packageBoundary.packages)) {
      expect(doc).toContain(`\`${dir}/\``);
      expect(doc).toContain(`\`${name}\``);
    }
    expect(doc).toContain(`\`${config.packageBoundary.door}\``);
    expect(existsSync(`${root}${config.packageBoundary.door}`)).toBe(true);
    expect(existsSync(`${root}tools/eslint-import-direction.js`)).toBe(true);
  });

  it('lists every folder of src/ as a stage', () => {
    for (const stage of Object.keys(config.importDirection)) expect(doc).toContain(`| \`src/${stage}/\` |`);
  });
});
