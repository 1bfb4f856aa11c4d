/** No file of the repository refers to a file outside it: no path into ../shared/, no guide that is not in the repo. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SELF = 'test/tools/self-contained.test.ts';
// Built from parts so that this file does not match itself.
const OUTSIDE = new RegExp(['ARCHITECTURE\\.md', '/work/' + 'shared', '(?:\\.\\./)+shared/(?:spec|fixtures|[A-Z])', 'tenant-external-api\\.md', 'document-translation-api\\.md'].join('|'));

describe('the repository is self-contained', () => {
  it('no tracked text file names a file outside the repository', () => {
    const files = spawnSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).stdout.split('\0').filter(Boolean);
    expect(files.length).toBeGreaterThan(100);
    const offenders: string[] = [];
    for (const file of files) {
      if (file === SELF || file === 'package-lock.json' || /\.(png|jpg|pdf|db|gz|zip)$/.test(file)) continue;
      let text: string;
      try {
        text = readFileSync(`${root}${file}`, 'utf8');
      } catch {
        continue; // listed but absent in this checkout
      }
      text.split('\n').forEach((line, i) => {
        if (OUTSIDE.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});
