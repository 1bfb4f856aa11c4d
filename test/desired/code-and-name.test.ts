/**
 * Departments and positions given by a code and a name (issue 45): `department` + `department_name` and `position` +
 * `position_name` on members derive them with the code as the id, so a name changed in HR keeps the id (and the
 * platform renames the record instead of creating another).
 */
import { membersOf } from '../sources/support.js';
import { describe, expect, it } from 'vitest';
import { buildDesiredState, getPath, SourceCollector } from '../../src/desired/index.js';
import { parseConfig } from '../../src/config/load.js';

const lookupOf = (rec: Record<string, unknown>) => (name: string) => getPath(rec, name);

function read(members: Record<string, unknown>[], extra: { departments?: Record<string, unknown>[] } = {}) {
  const c = new SourceCollector({
    source: 'hr',
    members: { fields: { id: 'id', display_name: 'name', email: 'email', department: 'unit.code', department_name: 'unit.name', position: 'job.code', position_name: 'job.title' } },
    ...(extra.departments ? { departments: { fields: { id: 'id', name: 'name' } } } : {}),
  });
  extra.departments?.forEach((d, i) => c.addDepartment(lookupOf(d), `d${i}`));
  members.forEach((m, i) => c.addMember(lookupOf(m), `m${i}`));
  return c.finish();
}

const PT = { code: '500', name: 'Physical Therapist' };

describe('departments and positions by code and name', () => {
  it('derives them from the members: the code is the id, the first name read names it, members point at the code', () => {
    const batch = read([
      { id: 'e1', name: 'Ana Lima', email: 'ana@example.com', unit: PT, job: { code: 'PT1', title: 'Physical Therapist I' } },
      { id: 'e2', name: 'Ben Cole', email: 'ben@example.com', unit: { code: '500', name: 'Physio (old name)' }, job: { code: 'PT1', title: 'PT one' } },
      { id: 'e3', name: 'Cy Doe', email: 'cy@example.com', unit: { code: '610', name: 'Front Desk' } },
      // A code without a name: the member points at it, nothing is derived from this record.
      { id: 'e4', name: 'Di Fox', email: 'di@example.com', unit: { code: '610' } },
    ]);
    expect(batch.provided).toEqual({ departments: true, positions: true, members: true });
    expect(batch.departments.map((d) => [d.source_id, d.name, d.parent_source_id])).toEqual([
      ['500', 'Physical Therapist', undefined],
      ['610', 'Front Desk', undefined],
    ]);
    expect(batch.positions.map((p) => [p.source_id, p.name])).toEqual([['PT1', 'Physical Therapist I']]);
    expect(membersOf(batch).map((m) => [m.source_id, m.department_source_id])).toEqual([
      ['e1', '500'],
      ['e2', '500'],
      ['e3', '610'],
      ['e4', '610'],
    ]);
    const state = buildDesiredState([batch]);
    expect(state.quarantine).toEqual([]);
  });

  it('a renamed department keeps its id; departments the source lists itself win over derived ones', () => {
    const before = read([{ id: 'e1', name: 'Ana Lima', email: 'ana@example.com', unit: PT }]);
    const after = read([{ id: 'e1', name: 'Ana Lima', email: 'ana@example.com', unit: { code: '500', name: 'Physiotherapy' } }]);
    expect(before.departments.map((d) => d.source_id)).toEqual(after.departments.map((d) => d.source_id));
    expect(after.departments[0]!.name).toBe('Physiotherapy');
    const listed = read([{ id: 'e1', name: 'Ana Lima', email: 'ana@example.com', unit: PT }], { departments: [{ id: '500', name: 'Rehabilitation' }] });
    expect(listed.departments.map((d) => [d.source_id, d.name])).toEqual([['500', 'Rehabilitation']]);
  });

  it('a member quarantined for another reason still proves its department exists', () => {
    const batch = read([
      { id: 'e1', name: 'Ana Lima', email: 'not-an-address', unit: PT },
      { id: 'e2', name: 'Ben Cole', email: 'ben@example.com', unit: { code: '610', name: 'Front Desk' } },
    ]);
    expect(batch.quarantine.map((q) => q.reason)).toEqual(['invalid_email']);
    expect(batch.departments.map((d) => d.source_id)).toEqual(['500', '610']);
  });

  it('the config wants the code beside the name, and position with position_name', () => {
    const cfg = (fields: string) =>
      `platform: { base_url: https://x.example/api, api_key: ek_live_0123456789abcdef }\nsync: { id: s }\nsources:\n  - name: hr\n    type: hris-json\n    members:\n      file: m.json\n      fields: { id: id, display_name: name, ${fields} }\n`;
    expect(() => parseConfig(cfg('department: unit.code, department_name: unit.name'), 'c.yaml', {})).not.toThrow();
    expect(() => parseConfig(cfg('department_name: unit.name'), 'c.yaml', {})).toThrow(/department_name names the department whose code is in department: map department too/);
    expect(() => parseConfig(cfg('position: job.code'), 'c.yaml', {})).toThrow(/position needs position_name/);
    expect(() => parseConfig(cfg('position_name: job.title'), 'c.yaml', {})).toThrow(/position_name needs position/);
  });
});
