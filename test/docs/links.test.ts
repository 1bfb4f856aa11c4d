/** Every relative link of the README and docs/ resolves: the file exists, and a #fragment names a heading of it. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The markdown files a reader meets: the README, docs/ (recursively), the chart's and the emulator package's READMEs. */
export function markdownFiles(): string[] {
  const out = [join(ROOT, 'README.md'), join(ROOT, 'helm/orgsync/README.md'), join(ROOT, 'bench/README.md'), join(ROOT, 'packages/emulator/README.md')].filter((f) => existsSync(f));
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.md')) out.push(p);
    }
  };
  walk(join(ROOT, 'docs'));
  return out;
}

/** Markdown text without fenced code blocks (links and headings in code are not links and headings). */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's heading anchors: lower case, punctuation other than - and _ dropped, spaces to -, repeats numbered. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

describe('documentation links', () => {
  const files = markdownFiles();

  it('finds the pages the README links to', () => {
    expect(files.map((f) => relative(ROOT, f))).toEqual(expect.arrayContaining([
      'README.md', 'docs/commands.md', 'docs/configuration.md', 'docs/operations.md', 'docs/safety.md', 'docs/emulator.md',
      'docs/sources/README.md', 'docs/sources/csv.md', 'docs/sources/hris-json.md', 'docs/sources/ldap.md',
    ]));
  });

  it('every relative link resolves, fragments included', () => {
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const m of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
        const [path, fragment] = target.split('#') as [string, string | undefined];
        const dest = path === '' ? file : resolve(dirname(file), path);
        const where = `${relative(ROOT, file)}: ${target}`;
        if (!existsSync(dest)) { broken.push(`${where} (no such file)`); continue; }
        if (fragment !== undefined && dest.endsWith('.md') && !anchors(readFileSync(dest, 'utf8')).has(fragment)) {
          broken.push(`${where} (no heading #${fragment})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('every docs page over 60 lines has a table of contents', () => {
    const missing = files
      .filter((f) => relative(ROOT, f).startsWith('docs/') && readFileSync(f, 'utf8').split('\n').length > 60)
      .filter((f) => !/^## Contents$/m.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f));
    expect(missing).toEqual([]);
  });

  it('the README stays under 300 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThan(300);
  });
});
