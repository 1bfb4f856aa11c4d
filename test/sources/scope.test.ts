/**
 * Scoping (issue 18 point 6): include / exclude rules per source entity, by raw field and value list or regular
 * expression, applied before validation (an out-of-scope record is never quarantined) and counted in `sources check`.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { read } from './support.js';
import { cli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('orgsync-scope-');
  writeFileSync(
    join(dir, 'people.csv'),
    [
      'id,name,email,employment_type,cost_center',
      'E1,Ada Lovelace,ada@example.com,employee,CC-100',
      'E2,Carl Contractor,carl@example.com,contractor,CC-100',
      'E3,Bad Mail,not-an-email,contractor,CC-200',
      'E4,Grace Hopper,grace@example.com,Employee,CC-200',
      'E5,Other Company,other@example.com,employee,XX-1',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'people.json'),
    JSON.stringify({ data: [{ id: 'J1', name: 'In', mail: 'in@example.com', employment: { type: 'FTE' } }, { id: 'J2', name: 'Out', mail: 'out@example.com', employment: { type: 'Contractor' } }] }),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const csvSource = (scope: Record<string, unknown>) => ({ name: 'hr', type: 'csv', members: { file: 'people.csv', fields: { id: 'id', display_name: 'name', email: 'email' }, ...scope } });

describe('include / exclude', () => {
  it('exclude by value list leaves contractors out before validation (their bad e-mail is never quarantined)', async () => {
    const state = await read([csvSource({ exclude: [{ field: 'employment_type', values: ['contractor'] }] })], dir);
    expect([...state.members].map((m) => m.source_id)).toEqual(['E1', 'E4', 'E5']);
    expect(state.quarantine).toEqual([]);
  });

  it('include by regular expression (the whole value must match), combined with exclude', async () => {
    const ok = await read([csvSource({ include: [{ field: 'cost_center', pattern: 'CC-\\d+' }], exclude: [{ field: 'employment_type', pattern: '[Cc]ontractor' }] })], dir);
    expect([...ok.members].map((m) => m.source_id)).toEqual(['E1', 'E4']);
    const partial = await read([csvSource({ include: [{ field: 'cost_center', pattern: 'CC-1' }] })], dir);
    expect([...partial.members]).toEqual([]);
  });

  it('HRIS JSON: the field is a field path', async () => {
    const state = await read([{ name: 'j', type: 'hris-json', members: { file: 'people.json', items_path: 'data', fields: { id: 'id', display_name: 'name', email: 'mail' }, exclude: [{ field: 'employment.type', values: ['Contractor'] }] } }], dir);
    expect([...state.members].map((m) => m.source_id)).toEqual(['J1']);
  });

  it('a rule names a column that is not in the header: the source fails naming the key', async () => {
    const err = await read([csvSource({ exclude: [{ field: 'kind', values: ['x'] }] })], dir).catch((e: Error) => e);
    expect((err as Error).message).toBe('source "hr": members: people.csv: column "kind" (members.exclude[0].field) is not in the header (id, name, email, employment_type, cost_center)');
  });

  it('a rule with both values and pattern, or a bad expression, is a config error', () => {
    const text = (rule: string) => `platform: { base_url: "http://127.0.0.1:1" }\nsources:\n  - name: hr\n    type: csv\n    members:\n      file: people.csv\n      fields: { id: id, display_name: name }\n      exclude: [${rule}]\n`;
    expect(() => parseConfig(text('{ field: a, values: [x], pattern: y }'), join(dir, 'c.yaml'), {})).toThrow('sources[0].members.exclude[0]: give either values or pattern');
    expect(() => parseConfig(text('{ field: a, pattern: "(" }'), join(dir, 'c.yaml'), {})).toThrow('sources[0].members.exclude[0].pattern: not a valid regular expression');
  });

  it('sources check counts what each source left out of scope', async () => {
    const file = join(dir, 'orgsync.yaml');
    writeFileSync(
      file,
      `platform:\n  base_url: http://127.0.0.1:1\nlog:\n  level: silent\nsources:\n  - name: hr\n    type: csv\n    members:\n      file: people.csv\n      fields: { id: id, display_name: name, email: email }\n      exclude: [{ field: employment_type, values: [contractor] }]\n`,
    );
    const { code, stdout: out } = await cli('sources', 'check', '--config', file);
    expect(code).toBe(0);
    expect(out).toContain('source hr (csv): 0 departments, 0 positions, 3 members, 0 quarantined, out of scope: 2 members\n');
    const { stdout: json } = await cli('sources', 'check', '--config', file, '--json');
    expect(JSON.parse(json).sources[0].excluded).toEqual({ departments: 0, positions: 0, members: 2 });
  });
});
