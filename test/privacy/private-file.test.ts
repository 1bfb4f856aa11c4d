/** writePrivateFile narrows a file others could read before writing into it; looseModeWarning names who can read. */
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { looseModeWarning, writePrivateFile } from '../../src/shared/private-file.js';
import { tempDir } from '../helpers/temp.js';

describe('private files', () => {
  it('an existing 0644 file is 0600 after writePrivateFile, with the new content', () => {
    const file = join(tempDir('orgsync-private-'), 'plan.json');
    writeFileSync(file, 'old content that is longer');
    chmodSync(file, 0o644);
    writePrivateFile(file, 'new');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe('new');
  });

  it('looseModeWarning: silent for 0600 and a missing file; names group, others or both', () => {
    const file = join(tempDir('orgsync-private-'), 'state.db');
    expect(looseModeWarning(file, 'the state DB')).toBeUndefined();
    writePrivateFile(file, '');
    expect(looseModeWarning(file, 'the state DB')).toBeUndefined();
    chmodSync(file, 0o640);
    expect(looseModeWarning(file, 'the state DB')).toBe(`the state DB ${file} is readable by its group (mode 640); it holds personal data: run chmod 600 ${file}`);
    chmodSync(file, 0o604);
    expect(looseModeWarning(file, 'the state DB')).toBe(`the state DB ${file} is readable by other users (mode 604); it holds personal data: run chmod 600 ${file}`);
  });
});
