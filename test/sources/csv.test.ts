import { describe, expect, it } from 'vitest';
import { csvSource, read, reasons } from './support.js';

describe('CSV connector on good data (the issue-4 config)', () => {
  it('maps, normalises and places every record', async () => {
    const state = await read([csvSource()]);
    expect(state.quarantine).toEqual([]);
    expect(state.provided).toEqual({ departments: true, positions: true, members: true });
    expect(state.departments.map((d) => [d.source_id, d.name, d.parent_source_id])).toEqual([
      ['D1', 'Engineering', undefined],
      ['D2', 'Platform', 'D1'],
      ['D3', 'SRE', 'D2'],
      ['D4', 'Sales', undefined],
    ]);
    expect(state.positions.map((p) => [p.source_id, p.name])).toEqual([
      ['P1', 'Engineer'],
      ['P2', 'Manager'],
    ]);
    const byId = Object.fromEntries([...state.members].map((m) => [m.source_id, m]));
    expect(byId.E1).toMatchObject({ display_name: 'Ada Lovelace', email: 'ada@example.com', phone: '+442079460958', title: 'Engineer', department_source_id: 'D3', status: 'active' });
    expect(byId.E1!.origin).toEqual({ source: 'hr', location: 'good/members.csv:2' });
    expect(byId.E2).toMatchObject({ status: 'suspended', department_source_id: 'D1' });
    expect(byId.E2!.phone).toBeUndefined();
    expect(byId.E3).toMatchObject({ phone: '+14155550132', status: 'left' });
    expect(byId.E3!.email).toBeUndefined();
    expect(byId.E4).toMatchObject({ display_name: 'Hopper, Jr. Grace', email: 'grace.jr@example.com', department_source_id: 'D4' });
    expect(byId.E5).toMatchObject({ display_name: 'Linus Torvalds' });
    expect(byId.E5!.department_source_id).toBeUndefined();
  });

  it('reads a semicolon-delimited file with quoted delimiters', async () => {
    const state = await read([{ ...csvSource({ delimiter: ';' }, 'malformed/semicolon.csv', 'malformed/departments-plain.csv'), departments: undefined, positions: undefined }]);
    expect(state.members).toHaveLength(1);
    expect([...state.members][0]!.display_name).toBe('Ada; Countess Lovelace');
    expect(state.provided.departments).toBe(false);
  });

  it('reads UTF-16LE and GB18030 files', async () => {
    const u16 = await read([csvSource({ encoding: 'utf-16le', departments: undefined, positions: undefined }, 'malformed/utf16le.csv')]);
    expect([...u16.members].map((m) => m.display_name)).toEqual(['Zoë Løvelace']);
    const gb = await read([csvSource({ encoding: 'gb18030', departments: undefined, positions: undefined }, 'malformed/gb18030.csv')]);
    expect([...gb.members].map((m) => m.display_name)).toEqual(['张 伟', '李 娜']);
    const gbk = await read([csvSource({ encoding: 'gbk', departments: undefined, positions: undefined }, 'malformed/gb18030.csv')]);
    expect([...gbk.members].map((m) => m.display_name)).toEqual(['张 伟', '李 娜']);
  });

  it('derives departments from a path column', async () => {
    const state = await read([
      {
        name: 'paths',
        type: 'csv',
        members: {
          file: 'good/members-with-paths.csv',
          fields: { id: 'id', display_name: 'name', email: 'email', department_path: 'org' },
          path_separator: ' > ',
        },
      },
    ]);
    expect(state.quarantine).toEqual([]);
    expect(state.departments.map((d) => [d.source_id, d.name, d.parent_source_id])).toEqual([
      ['Engineering', 'Engineering', undefined],
      ['Engineering > Platform', 'Platform', 'Engineering'],
      ['Engineering > Platform > SRE', 'SRE', 'Engineering > Platform'],
      ['Sales', 'Sales', undefined],
    ]);
    expect([...state.members].map((m) => m.department_source_id)).toEqual(['Engineering > Platform > SRE', 'Sales', 'Engineering', undefined]);
    expect(state.provided.departments).toBe(true);
    expect(reasons(state)).toEqual([]);
  });

  it('reads a file without a header, columns by number, with another quote character', async () => {
    const state = await read([
      { name: 'hr', type: 'csv', header: false, delimiter: ';', quote: "'", members: { file: 'good/no-header.csv', fields: { id: '1', display_name: '2', email: '3' } } },
    ]);
    expect(state.quarantine).toEqual([]);
    expect([...state.members].map((m) => [m.source_id, m.display_name, m.email, m.origin!.location])).toEqual([
      ['E1', 'Ada; the Countess', 'ada@example.com', 'good/no-header.csv:1'],
      ['E2', 'Alan', 'alan@example.com', 'good/no-header.csv:2'],
    ]);
  });

  it('says how to map columns without a header', async () => {
    await expect(read([{ name: 'hr', type: 'csv', header: false, members: { file: 'good/no-header.csv', fields: { id: 'id', display_name: '2' } } }])).rejects.toThrow(
      'source "hr": members: good/no-header.csv: without a header, map columns by number ("1", "2", ...), not "id"',
    );
  });

  it('stops when the run is aborted, never returning a partial directory', async () => {
    const ac = new AbortController();
    ac.abort();
    const { readDesiredState } = await import('../../src/sources/index.js');
    const { sourcesConfig } = await import('./support.js');
    const { silentLogger } = await import('../../src/shared/logger.js');
    await expect(readDesiredState(sourcesConfig([csvSource()]), { env: {}, logger: silentLogger, signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });
});

