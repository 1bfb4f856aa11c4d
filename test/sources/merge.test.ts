import { describe, expect, it } from 'vitest';
import { read } from './support.js';

const hr = {
  name: 'hr',
  type: 'csv',
  departments: { file: 'good/departments.csv', fields: { id: 'dept_id', name: 'name', parent: 'parent_id' } },
  members: {
    file: 'good/members-no-contact.csv',
    fields: { id: 'employee_id', display_name: '{first_name} {last_name}', title: 'title', department: 'dept_id', status: 'status' },
    status_map: { active: 'active', leave: 'suspended' },
  },
};
const contacts = (extra: Record<string, unknown> = {}) => ({
  name: 'directory',
  type: 'hris-json',
  members: { file: 'hris/contacts.json', items_path: 'people', fields: { id: 'employeeNumber', display_name: 'name', email: 'work.email', phone: 'work.phone', title: 'jobTitle' } },
  ...extra,
});

describe('several sources merged per entity by source id', () => {
  it('fills fields from the second source; the first wins where both have a value', async () => {
    const state = await read([hr, contacts()]);
    const m = Object.fromEntries([...state.members].map((x) => [x.source_id, x]));
    expect(m.E1).toMatchObject({ display_name: 'Ada Lovelace', email: 'ada@example.org', phone: '+442079460958', title: 'Engineer', department_source_id: 'D1', status: 'active' });
    expect(m.E1!.origin).toEqual({ source: 'hr', location: 'good/members-no-contact.csv:2', fieldSources: { display_name: 'hr', title: 'hr', department_source_id: 'hr', status: 'hr', email: 'directory', phone: 'directory' } });
    expect(m.E2).toMatchObject({ email: 'alan@example.org', title: 'Cryptanalyst', status: 'suspended' });
    // Only in the second source: kept, with its own fields.
    expect(m.E9).toMatchObject({ display_name: 'Only In HRIS', email: 'nobody@example.org', status: 'active' });
    // E3 has no contact in either source.
    expect(state.quarantine.map((q) => [q.source, q.source_id, q.reason, q.location])).toEqual([['hr', 'E3', 'no_contact', 'good/members-no-contact.csv:4']]);
  });

  it('authoritative_fields lets the later source win a field', async () => {
    const state = await read([hr, contacts({ authoritative_fields: ['members.title'] })]);
    const m = Object.fromEntries([...state.members].map((x) => [x.source_id, x]));
    expect(m.E1!.title).toBe('Chief Engineer');
    expect(m.E3!).toBeUndefined();
  });

  it('the first source in config order wins by default', async () => {
    const state = await read([contacts(), hr]);
    const m = Object.fromEntries([...state.members].map((x) => [x.source_id, x]));
    expect(m.E1!.title).toBe('Chief Engineer');
    expect(m.E1!.origin!.source).toBe('directory');
  });
});
