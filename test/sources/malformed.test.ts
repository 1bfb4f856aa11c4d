/**
 * The malformed-input corpus (test/fixtures/sources/malformed, hris/): each input asserts the exact quarantine
 * reason and message, or the exact error of a source that cannot be read. LDAP cases are in ldap.test.ts.
 */
import { writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DesiredState, QuarantineEntry } from '../../src/domain/desired.js';
import { csvSource, FIXTURES, read } from './support.js';
import { tempDir } from '../helpers/temp.js';

type Expected = Pick<QuarantineEntry, 'entity' | 'reason' | 'location' | 'message'> & { source_id?: string };

const membersOnly = (file: string, over: Record<string, unknown> = {}) => csvSource({ positions: undefined, ...over }, `malformed/${file}`, 'malformed/departments-plain.csv');
const deptsOnly = (file: string, members = 'malformed/members-two-depts.csv') => csvSource({ positions: undefined }, members, `malformed/${file}`);

function q(entity: Expected['entity'], reason: string, location: string, message: string, source_id?: string): Expected {
  return { entity, reason, location, message, ...(source_id !== undefined ? { source_id } : {}) };
}

function strip(state: DesiredState): Expected[] {
  return state.quarantine.map(({ entity, reason, location, message, source_id }) => ({ entity, reason, location, message, ...(source_id !== undefined ? { source_id } : {}) }));
}

const quarantineCases: { name: string; source: () => Record<string, unknown>; expected: Expected[]; members?: number }[] = [
  {
    name: 'duplicate member ids: every copy is quarantined',
    source: () => membersOnly('duplicate-ids.csv'),
    expected: [
      q('members', 'duplicate_id', 'malformed/duplicate-ids.csv:2', 'source id "E1" appears 2 times in this source (also at malformed/duplicate-ids.csv:3)', 'E1'),
      q('members', 'duplicate_id', 'malformed/duplicate-ids.csv:3', 'source id "E1" appears 2 times in this source (also at malformed/duplicate-ids.csv:2)', 'E1'),
    ],
    members: 1,
  },
  {
    name: 'invalid e-mail',
    source: () => membersOnly('invalid-email.csv'),
    expected: [q('members', 'invalid_email', 'malformed/invalid-email.csv:2', 'invalid e-mail "ada@@example"', 'E1')],
    members: 1,
  },
  {
    name: 'invalid phone (phone_policy: quarantine)',
    source: () => membersOnly('invalid-phone.csv', { phone_policy: 'quarantine' }),
    expected: [q('members', 'invalid_phone', 'malformed/invalid-phone.csv:2', 'invalid phone "12345"', 'E1')],
    members: 1,
  },
  {
    name: 'invalid phone and no e-mail (phone_policy: drop, the default): no contact left, the entry names the phone',
    source: () => membersOnly('invalid-phone.csv'),
    expected: [q('members', 'no_contact', 'malformed/invalid-phone.csv:2', 'member has neither e-mail nor a valid phone (the platform needs one): invalid phone "12345"', 'E1')],
    members: 1,
  },
  {
    name: 'national phone without a phone_region (phone_policy: quarantine)',
    source: () => membersOnly('invalid-phone.csv', { phone_region: undefined, phone_policy: 'quarantine' }),
    expected: [q('members', 'invalid_phone', 'malformed/invalid-phone.csv:2', 'invalid phone "12345" (no country code and no phone_region)', 'E1')],
    members: 1,
  },
  {
    name: 'neither e-mail nor phone',
    source: () => membersOnly('no-contact.csv'),
    expected: [q('members', 'no_contact', 'malformed/no-contact.csv:2', 'member has neither e-mail nor phone (the platform needs one)', 'E1')],
    members: 1,
  },
  {
    name: 'control character in a name',
    source: () => membersOnly('control-characters.csv'),
    expected: [q('members', 'control_characters', 'malformed/control-characters.csv:2', 'display_name contains the control character U+0007', 'E1')],
    members: 1,
  },
  {
    name: 'issue 44: bidirectional controls (U+202E in a name, U+2066 in a title) are quarantined like other controls',
    source: () => membersOnly('bidi-controls.csv'),
    expected: [
      q('members', 'control_characters', 'malformed/bidi-controls.csv:2', 'display_name contains the bidirectional control character U+202E', 'E1'),
      q('members', 'control_characters', 'malformed/bidi-controls.csv:3', 'title contains the bidirectional control character U+2066', 'E2'),
    ],
    members: 1,
  },
  {
    name: 'newline inside a quoted name (multi-line record)',
    source: () => membersOnly('newline-in-name.csv'),
    expected: [q('members', 'control_characters', 'malformed/newline-in-name.csv:3', 'display_name contains the control character U+000A', 'E1')],
    members: 1,
  },
  {
    name: 'empty name',
    source: () => membersOnly('empty-name.csv'),
    expected: [q('members', 'empty_name', 'malformed/empty-name.csv:2', 'display_name is empty', 'E1')],
    members: 1,
  },
  {
    name: 'missing id',
    source: () => membersOnly('missing-id.csv'),
    expected: [q('members', 'missing_id', 'malformed/missing-id.csv:2', 'no source id (the id field employee_id is empty or missing)')],
    members: 1,
  },
  {
    name: 'status not in status_map',
    source: () => membersOnly('unknown-status.csv'),
    expected: [q('members', 'unknown_status', 'malformed/unknown-status.csv:2', 'status "retired" is not in status_map', 'E1')],
    members: 1,
  },
  {
    name: 'member in an unknown department (orphan)',
    source: () => membersOnly('unknown-department.csv'),
    expected: [q('members', 'unknown_department', 'malformed/unknown-department.csv:2', 'department "D99" does not exist', 'E1')],
    members: 1,
  },
  {
    name: 'GBK bytes read as UTF-8 (wrong encoding)',
    source: () => membersOnly('gbk-read-as-utf8.csv'),
    expected: [q('members', 'invalid_encoding', 'malformed/gbk-read-as-utf8.csv:2', "display_name contains U+FFFD (bytes not valid in the configured encoding; check the source's encoding)", 'E1')],
    members: 1,
  },
  {
    name: 'UTF-8 with a BOM: the header still matches',
    source: () => membersOnly('bom-utf8.csv'),
    expected: [],
    members: 1,
  },
  {
    name: 'the same e-mail on two live members (case-insensitive); a leaver does not count',
    source: () => membersOnly('duplicate-email.csv'),
    expected: [
      q('members', 'duplicate_email', 'malformed/duplicate-email.csv:2', 'e-mail "same@example.com" is also used by member "E2"', 'E1'),
      q('members', 'duplicate_email', 'malformed/duplicate-email.csv:3', 'e-mail "same@example.com" is also used by member "E1"', 'E2'),
    ],
    members: 1,
  },
  {
    name: 'department cycle: the ring, the department below it, and its members',
    source: () => deptsOnly('departments-cycle.csv', 'malformed/members-two-depts.csv'),
    expected: [
      q('departments', 'cycle', 'malformed/departments-cycle.csv:3', 'the department hierarchy has a cycle: "D2" -> "D3" -> "D2"', 'D2'),
      q('departments', 'cycle', 'malformed/departments-cycle.csv:4', 'the department hierarchy has a cycle: "D2" -> "D3" -> "D2"', 'D3'),
      q('departments', 'parent_quarantined', 'malformed/departments-cycle.csv:5', 'parent department "D3" is quarantined', 'D4'),
      q('members', 'department_quarantined', 'malformed/members-two-depts.csv:3', 'department "D2" is quarantined', 'E2'),
      q('members', 'department_quarantined', 'malformed/members-two-depts.csv:4', 'department "D3" is quarantined', 'E3'),
    ],
    members: 1,
  },
  {
    name: 'orphan department (unknown parent) and its child',
    source: () => deptsOnly('departments-orphan.csv'),
    expected: [
      q('departments', 'unknown_parent', 'malformed/departments-orphan.csv:3', 'parent department "D77" does not exist', 'D2'),
      q('departments', 'parent_quarantined', 'malformed/departments-orphan.csv:4', 'parent department "D2" is quarantined', 'D3'),
      q('members', 'department_quarantined', 'malformed/members-two-depts.csv:3', 'department "D2" is quarantined', 'E2'),
      q('members', 'department_quarantined', 'malformed/members-two-depts.csv:4', 'department "D3" is quarantined', 'E3'),
    ],
    members: 1,
  },
  {
    name: 'department that is its own parent',
    source: () => deptsOnly('departments-self-parent.csv'),
    expected: [
      q('departments', 'cycle', 'malformed/departments-self-parent.csv:3', 'department "D2" is its own parent', 'D2'),
      q('members', 'department_quarantined', 'malformed/members-two-depts.csv:3', 'department "D2" is quarantined', 'E2'),
    ],
    members: 2,
  },
  {
    name: 'duplicate department ids: dependants follow',
    source: () => deptsOnly('departments-duplicate.csv'),
    expected: [
      q('departments', 'duplicate_id', 'malformed/departments-duplicate.csv:3', 'source id "D2" appears 2 times in this source (also at malformed/departments-duplicate.csv:4)', 'D2'),
      q('departments', 'duplicate_id', 'malformed/departments-duplicate.csv:4', 'source id "D2" appears 2 times in this source (also at malformed/departments-duplicate.csv:3)', 'D2'),
      q('departments', 'parent_quarantined', 'malformed/departments-duplicate.csv:5', 'parent department "D2" is quarantined', 'D3'),
      q('members', 'department_quarantined', 'malformed/members-two-depts.csv:3', 'department "D2" is quarantined', 'E2'),
      q('members', 'department_quarantined', 'malformed/members-two-depts.csv:4', 'department "D3" is quarantined', 'E3'),
    ],
    members: 1,
  },
  {
    name: 'sort_order that is not an integer',
    source: () => {
      const s = deptsOnly('departments-sort-order.csv');
      (s.departments as { fields: Record<string, string> }).fields.sort_order = 'sort_order';
      return s;
    },
    expected: [
      q('departments', 'invalid_sort_order', 'malformed/departments-sort-order.csv:3', 'sort_order "first" is not an integer', 'D2'),
      q('members', 'department_quarantined', 'malformed/members-two-depts.csv:3', 'department "D2" is quarantined', 'E2'),
    ],
    members: 2,
  },
  {
    name: 'JSON: an object where a value is mapped',
    source: () => ({
      name: 'hris',
      type: 'hris-json',
      members: { file: 'hris/object-in-field.json', items_path: 'data.employees', fields: { id: 'id', display_name: '{firstName} {lastName}', email: 'workEmail', department: 'department.id' } },
    }),
    expected: [q('members', 'wrong_type', 'hris/object-in-field.json#$.data.employees[0]', 'department: department.id is an object, expected a string, number or boolean', '1')],
    members: 0,
  },
];

const errorCases: { name: string; source: () => Record<string, unknown>; error: string | RegExp; code?: string }[] = [
  { name: 'bad quoting', source: () => membersOnly('bad-quoting.csv'), error: 'source "hr": members: malformed/bad-quoting.csv:3:2 (line 3, column 2 "first_name"): malformed CSV: Invalid Closing Quote: got "x" at line 3 instead of delimiter, record delimiter, trimable character (if activated) or comment', code: 'SOURCE_INVALID' },
  { name: 'truncated file (ends inside quotes)', source: () => membersOnly('truncated-quote.csv'), error: 'source "hr": members: malformed/truncated-quote.csv:3:2 (line 3, column 2 "first_name"): the file ends inside a quoted field (truncated or bad quoting): Quote Not Closed: the parsing is finished with an opening quote at line 3', code: 'SOURCE_INVALID' },
  { name: 'wrong column count', source: () => membersOnly('wrong-column-count.csv'), error: 'source "hr": members: malformed/wrong-column-count.csv:3:7 (line 3, column 7 "dept_id"): malformed CSV: Invalid Record Length: expect 8, got 6 on line 3', code: 'SOURCE_INVALID' },
  { name: 'a mapped column missing from the header', source: () => membersOnly('missing-column.csv'), error: 'source "hr": members: malformed/missing-column.csv: column "dept_id" (members.fields.department) is not in the header (employee_id, first_name, last_name, email, phone, title, status)' },
  { name: 'UTF-16LE file read as UTF-8', source: () => membersOnly('utf16le-read-as-utf8.csv'), error: 'source "hr": members: malformed/utf16le-read-as-utf8.csv: the file starts with a UTF-16 byte-order mark but encoding is utf-8; set encoding: utf-16le' },
  { name: 'empty file', source: () => membersOnly('empty.csv'), error: 'source "hr": members: malformed/empty.csv: the file is empty (no header row)' },
  { name: 'missing file', source: () => membersOnly('no-such-file.csv'), error: `source "hr": members: malformed/no-such-file.csv: cannot read ${join(FIXTURES, 'malformed/no-such-file.csv')}: ENOENT` },
  { name: 'unknown encoding', source: () => membersOnly('bom-utf8.csv', { encoding: 'klingon' }), error: 'source "hr": departments: malformed/departments-plain.csv: unknown encoding "klingon"' },
  {
    name: 'truncated JSON',
    source: () => ({ name: 'hris', type: 'hris-json', members: { file: 'hris/truncated.json', items_path: 'data.employees', fields: { id: 'id', display_name: 'firstName' } } }),
    // The parser's own detail differs between Node versions; the line up to it is exact.
    error: /^source "hris": members: hris\/truncated\.json:\d+:\d+: malformed JSON: \S.*$/,
    code: 'SOURCE_INVALID',
  },
  {
    name: 'a wrong items path',
    source: () => ({ name: 'hris', type: 'hris-json', members: { file: 'hris/employees.json', items_path: 'data.employee', fields: { id: 'id', display_name: 'firstName' } } }),
    error: 'source "hris": members: hris/employees.json: items_path "data.employee" does not lead to an array (found nothing)',
  },
  {
    name: 'an items path that leads to an object',
    source: () => ({ name: 'hris', type: 'hris-json', members: { file: 'hris/not-array.json', items_path: 'data.employees', fields: { id: 'id', display_name: 'firstName' } } }),
    error: 'source "hris": members: hris/not-array.json: items_path "data.employees" does not lead to an array (found an object)',
  },
];

describe('malformed inputs: quarantine with reasons and locations', () => {
  for (const c of quarantineCases) {
    it(c.name, async () => {
      const state = await read([c.source()]);
      expect(strip(state)).toEqual(c.expected.map((e) => ({ ...e })));
      for (const e of state.quarantine) expect(e.source).toBe(e.location.startsWith('hris/') ? 'hris' : 'hr');
      if (c.members !== undefined) expect(state.members).toHaveLength(c.members);
    });
  }

  it('a 10,000-character name', async () => {
    const dir = tempDir('orgsync-long-');
    writeFileSync(join(dir, 'members.csv'), `employee_id,first_name,last_name,email,phone,title,dept_id,status\nE1,${'A'.repeat(10_000)},Lovelace,ada@example.com,,,,active\nE2,Alan,Turing,alan@example.com,,,,active\n`);
    const state = await read([{ name: 'hr', type: 'csv', members: { file: 'members.csv', fields: { id: 'employee_id', display_name: '{first_name} {last_name}', email: 'email' } } }], dir);
    expect(strip(state)).toEqual([q('members', 'name_too_long', 'members.csv:2', 'display_name is 10009 characters long (at most 255)', 'E1')]);
    expect([...state.members].map((m) => m.source_id)).toEqual(['E2']);
  });

  it('a department over-long name makes its members follow', async () => {
    const dir = tempDir('orgsync-long-');
    writeFileSync(join(dir, 'departments.csv'), `dept_id,name,parent_id\nD1,${'x'.repeat(300)},\nD2,Fine,D1\n`);
    copyFileSync(join(FIXTURES, 'malformed/members-two-depts.csv'), join(dir, 'members.csv'));
    const state = await read([{ ...csvSource({ positions: undefined }, 'members.csv', 'departments.csv') }], dir);
    expect(strip(state)).toEqual([
      q('departments', 'name_too_long', 'departments.csv:2', 'name is 300 characters long (at most 255)', 'D1'),
      q('departments', 'parent_quarantined', 'departments.csv:3', 'parent department "D1" is quarantined', 'D2'),
      q('members', 'department_quarantined', 'members.csv:2', 'department "D1" is quarantined', 'E1'),
      q('members', 'department_quarantined', 'members.csv:3', 'department "D2" is quarantined', 'E2'),
      q('members', 'unknown_department', 'members.csv:4', 'department "D3" does not exist', 'E3'),
    ]);
  });
});

describe('malformed inputs: a source that cannot be read fails with one clear line', () => {
  for (const c of errorCases) {
    it(c.name, async () => {
      const err = await read([c.source()]).then(
        () => undefined,
        (e: unknown) => e as { code: string; message: string },
      );
      expect(err?.code).toBe(c.code ?? 'SOURCE_UNREADABLE');
      if (typeof c.error === 'string') expect(err?.message).toBe(c.error);
      else expect(err?.message).toMatch(c.error);
      expect(err?.message).not.toContain('\n');
    });
  }
});
