/**
 * The mapping's tracing hook (src/desired/mapping.ts), which `sources preview` reads: each field read is reported
 * with the candidate of its spec that gave the value, the phone's candidates in the order they are tried, and a
 * record's values are the same with and without a trace.
 */
import { membersOf } from './support.js';
import { describe, expect, it } from 'vitest';
import { SourceCollector, type MappingTrace, type SourceMappingOptions } from '../../src/desired/index.js';

const options = (trace?: MappingTrace): SourceMappingOptions => ({
  source: 'hr',
  phoneRegion: 'US',
  members: { fields: { id: 'id', display_name: ['displayName', '{given} {family}'], email: ['mail', 'upn'], phone: ['mobile', 'work'], status: 'state' }, status_map: { on: 'active' } },
  ...(trace ? { trace } : {}),
});

describe('the mapping trace', () => {
  it('reports the candidate that gave each value, and every phone and e-mail candidate tried', () => {
    const reads: [string, string, string, unknown][] = [];
    const collector = new SourceCollector(options({ read: (entity, field, from, text) => reads.push([entity, field, from, text]) }));
    const record: Record<string, string> = { id: 'E1', displayName: '', given: 'Ann', family: 'Lee', mail: ' ', upn: 'Ann@Example.com', mobile: '12', work: '(415) 555-0101', state: 'on' };
    collector.addMember((n) => record[n], 'people.csv:2');
    expect(reads).toEqual([
      ['members', 'id', 'id', 'E1'],
      ['members', 'display_name', '{given} {family}', 'Ann Lee'],
      ['members', 'email', 'mail', ' '],
      ['members', 'email', 'upn', 'Ann@Example.com'],
      ['members', 'phone', 'mobile', '12'],
      ['members', 'phone', 'work', '(415) 555-0101'],
      ['members', 'status', 'state', 'on'],
    ]);
    const traced = membersOf(collector.finish());
    const plain = new SourceCollector(options());
    plain.addMember((n) => record[n], 'people.csv:2');
    expect(traced).toEqual(membersOf(plain.finish()));
    expect(traced[0]).toMatchObject({ display_name: 'Ann Lee', email: 'ann@example.com', phone: '+14155550101', status: 'active' });
  });

  it('names each e-mail and phone candidate tried when none gave a value, the whole spec for other fields, and a wrong type as the problem of the candidate that met it', () => {
    const reads: [string, string, unknown][] = [];
    const collector = new SourceCollector(options({ read: (_e, field, from, text) => reads.push([field, from, text]) }));
    const record: Record<string, unknown> = { id: 'E2', displayName: 'Bo', mail: { address: 'x' } };
    collector.addMember((n) => record[n], 'people.csv:3');
    expect(reads.slice(0, 3)).toEqual([
      ['id', 'id', 'E2'],
      ['display_name', 'displayName', 'Bo'],
      ['email', 'mail', { ok: false, problem: 'mail is an object, not a value' }],
    ]);
    const empty: [string, string, unknown][] = [];
    const second = new SourceCollector(options({ read: (_e, field, from, text) => empty.push([field, from, text]) }));
    second.addMember((n) => ({ id: 'E3', displayName: 'Cy' })[n as 'id'], 'people.csv:4');
    expect(empty.filter(([field]) => field === 'email')).toEqual([
      ['email', 'mail', ''],
      ['email', 'upn', ''],
    ]);
    expect(empty.find(([field]) => field === 'status')).toEqual(['status', 'state', '']);
    expect(empty.filter(([field]) => field === 'phone')).toEqual([
      ['phone', 'mobile', ''],
      ['phone', 'work', ''],
    ]);
  });
});
