/**
 * CSV exports as HR systems write them (issue 18 point 7): report titles above the header (skip_rows), comment
 * lines, a delimiter sniffed from the header, and a department path column with its own separator.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sniffDelimiter } from '../../src/sources/csv/read-csv.js';
import { read } from './support.js';
import { tempDir } from '../helpers/temp.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('orgsync-csvopts-');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const members = (file: string, over: Record<string, unknown> = {}, memberOver: Record<string, unknown> = {}) => ({
  name: 'hr',
  type: 'csv',
  members: { file, fields: { id: 'Personnel No', display_name: 'Name', email: 'E-mail', department_path: 'Org Unit' }, path_separator: ' > ', ...memberOver },
  ...over,
});

describe('CSV options', () => {
  it('skip_rows, comment and delimiter: auto (semicolon) with a " > " department path', async () => {
    writeFileSync(
      join(dir, 'sap.csv'),
      [
        'Employee report; all active staff',
        'Generated 2026-01-05 07:00 by HR export',
        '',
        'Personnel No;Name;E-mail;Org Unit',
        '# exported for orgsync',
        '1001;Ada Lovelace;ada@example.com;Company > Sales > EMEA',
        '1002;"Turing; Alan";alan@example.com;Company > Sales',
        '# trailing note',
        '1003;Grace Hopper;grace@example.com;Company > Engineering',
        '',
      ].join('\r\n'),
    );
    const state = await read([members('sap.csv', { skip_rows: 3, comment: '#', delimiter: 'auto' })], dir);
    expect(state.quarantine).toEqual([]);
    expect([...state.members].map((m) => [m.source_id, m.display_name, m.department_source_id, m.origin!.location])).toEqual([
      ['1001', 'Ada Lovelace', 'Company > Sales > EMEA', 'sap.csv:6'],
      ['1002', 'Turing; Alan', 'Company > Sales', 'sap.csv:7'],
      ['1003', 'Grace Hopper', 'Company > Engineering', 'sap.csv:9'],
    ]);
    expect(state.departments.map((d) => [d.source_id, d.name, d.parent_source_id])).toEqual([
      ['Company', 'Company', undefined],
      ['Company > Sales', 'Sales', 'Company'],
      ['Company > Sales > EMEA', 'EMEA', 'Company > Sales'],
      ['Company > Engineering', 'Engineering', 'Company'],
    ]);
  });

  it('delimiter: auto reads tab and pipe files, also in UTF-16LE, and errors keep their absolute line numbers', async () => {
    writeFileSync(join(dir, 'tab.csv'), iconv.encode('\ufeffPersonnel No\tName\tE-mail\tOrg Unit\n1\tA B\ta@example.com\tX\n', 'utf-16le'));
    const tab = await read([members('tab.csv', { delimiter: 'auto', encoding: 'utf-16le' })], dir);
    expect([...tab.members].map((m) => m.display_name)).toEqual(['A B']);
    writeFileSync(join(dir, 'pipe.csv'), 'title\nPersonnel No|Name|E-mail|Org Unit\n1|A|a@example.com|X\n2|"B|x"y|b@example.com|X\n');
    const err = await read([members('pipe.csv', { delimiter: 'auto', skip_rows: 1 })], dir).catch((e: Error & { code: string }) => e);
    expect((err as { code: string }).code).toBe('SOURCE_INVALID');
    expect((err as Error).message).toMatch(/^source "hr": members: pipe\.csv:4:2 \(line 4, column 2 "Name"\): malformed CSV: /);
  });

  it('the per-file skip_rows overrides the source\'s', async () => {
    writeFileSync(join(dir, 'plain.csv'), 'Personnel No,Name,E-mail,Org Unit\n1,A,a@example.com,X\n');
    const state = await read([members('plain.csv', { skip_rows: 2 }, { skip_rows: 0 })], dir);
    expect(state.members).toHaveLength(1);
  });

  it('sniffs the most frequent candidate outside quotes', () => {
    expect(sniffDelimiter('a;b;c\n1;2;3', 0, undefined, '"')).toBe(';');
    expect(sniffDelimiter('"x,y";b;c', 0, undefined, '"')).toBe(';');
    expect(sniffDelimiter('title, with comma\n# c\n\na\tb\tc', 1, '#', '"')).toBe('\t');
    expect(sniffDelimiter('a|b', 0, undefined, '"')).toBe('|');
    expect(sniffDelimiter('single', 0, undefined, '"')).toBe(',');
  });
});
