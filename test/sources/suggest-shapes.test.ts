/**
 * `sources suggest` on the shapes vendors without a preset publish (issue 45 point 7): ADP Workforce Now's workers
 * (organisational units of several types, e-mails and phones in lists told apart by nameCode, "Family, Given"
 * formatted names, a nested status code, a worker id beside item ids), Gusto's employees (a preferred first name,
 * department uuid and name, `terminated: true`, a list of terminations) and departments (`--entity departments`),
 * and the closing list of the fields it found nothing for, each with why.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { systemClock } from '../../src/shared/clock.js';
import { resolvePayload } from '../helpers/hr-vendor.js';
import { runSourcesCli } from '../helpers/preview.js';
import { tempDir } from '../helpers/temp.js';

const TODAY = Math.floor(systemClock.now() / 86_400_000) * 86_400_000;
const FIXTURES = new URL('../fixtures/vendors/', import.meta.url);

/** A recorded payload resolved for today and saved where a user would keep it. */
function saved(fixture: string, name: string): string {
  const file = join(tempDir('orgsync-suggest-shapes-'), name);
  writeFileSync(file, resolvePayload(readFileSync(new URL(fixture, FIXTURES), 'utf8'), { today: TODAY, shift: 0, base: 'https://api.example' }));
  return file;
}

const suggest = (...args: string[]) => runSourcesCli(['sources', 'suggest', ...args]);
type Fragment = { fields: Record<string, string | string[]>; status_map?: Record<string, string> };

describe('sources suggest reads real shapes', () => {
  it('ADP workers: the Associate OID, work e-mail and phones before personal ones, given and family names, the Department unit by code and name', async () => {
    const r = await suggest('--sample', saved('adp-workforce-now/workers.json', 'workers.json'));
    expect(r.code).toBe(0);
    const primary = 'workAssignments[primaryIndicator=true]';
    const unit = `${primary}.homeOrganizationalUnits[typeCode.codeValue=Department].nameCode`;
    expect(parse(r.stdout)).toEqual({
      fields: {
        // Not workAssignments[0].itemID (an assignment's id) nor workerID.idValue (an employee number).
        id: 'associateOID',
        // Not person.legalName.formattedName, which holds "Okafor, Maya"; the nickname first where there is one.
        display_name: ['{!person.legalName.nickName} {person.legalName.familyName1}', '{person.legalName.givenName} {person.legalName.familyName1}'],
        email: 'businessCommunication.emails[nameCode.codeValue=Work E-mail].emailUri',
        phone: [
          'businessCommunication.mobiles[nameCode.codeValue=Work Cell].formattedNumber',
          'businessCommunication.landlines[nameCode.codeValue=Work Phone].formattedNumber',
          'person.communication.mobiles[nameCode.codeValue=Personal Cell].formattedNumber',
        ],
        title: `${primary}.jobTitle`,
        department: `${unit}.codeValue`,
        department_name: `${unit}.shortName`,
        position: `${primary}.jobCode.codeValue`,
        position_name: `${primary}.jobCode.shortName`,
        // The worker's status, not the marital status code nor an assignment's.
        status: 'workerStatus.statusCode.codeValue',
        // Not person.birthDate.
        start_date: 'workerDates.originalHireDate',
        end_date: 'workerDates.terminationDate',
      },
      status_map: { Active: 'active', Terminated: 'left', Inactive: 'suspended' },
    });
    // Lists are printed in flow style with every path quoted: valid YAML to paste.
    expect(r.stdout).toContain('  email: businessCommunication.emails[nameCode.codeValue=Work E-mail].emailUri # sure: key "businessCommunication.emails[nameCode.codeValue=Work E-mail].emailUri"\n');
    expect(r.stdout).toContain('  phone: [ "businessCommunication.mobiles[nameCode.codeValue=Work Cell].formattedNumber", ');
    expect(r.stdout).not.toContain('found nothing for');
  });

  it('Gusto employees: preferred first name, work e-mail before personal, department uuid and name, status from `terminated`, the latest termination', async () => {
    const r = await suggest('--sample', saved('gusto/employees.json', 'employees.json'));
    expect(r.code).toBe(0);
    const f = parse(r.stdout) as Fragment;
    expect(f.fields).toEqual({
      id: 'uuid',
      display_name: ['{!preferred_first_name} {last_name}', '{first_name} {last_name}'],
      email: ['work_email', 'email'],
      phone: 'phone',
      title: 'jobs[primary=true].title',
      department: 'department_uuid',
      department_name: 'department',
      // Not current_employment_status (full_time is no status) nor terminations[0].active (a termination's).
      status: 'terminated',
      start_date: 'jobs[primary=true].hire_date',
      // The latest termination, not [0]; never the boolean `terminated`.
      end_date: 'terminations[-1].effective_date',
    });
    expect(f.status_map).toEqual({ false: 'active', true: 'left' });
    expect(r.stdout).toContain('  status: terminated # likely: key "terminated"\n');
  });

  it('--entity departments proposes department fields, and a departments payload read as members says to use it', async () => {
    const file = saved('gusto/departments.json', 'departments.json');
    const r = await suggest('--sample', file, '--entity', 'departments');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        `# sources suggest: ${file} (departments)`,
        '# records: the file is an array; 2 looked at',
        "# proposed mapping (paste under the source's departments:):",
        '',
        'fields:',
        '  id: uuid # sure: key "uuid"',
        '  name: title # sure: key "title"',
        '',
        '# found nothing for:',
        '#   parent: no key named like a parent (parent, parentId) in the 2 records looked at',
        '#   sort_order: no key named like a sort order (sort, order) in the 2 records looked at',
        '',
      ].join('\n'),
    );
    const asMembers = await suggest('--sample', file);
    expect(asMembers.stdout).toContain('#   (entity): the records look like departments (no e-mail, phone or person name): run again with --entity departments\n');
  });

  it('closes with each field it found nothing for and why: a date key holding booleans, a status that is none, a formatted name', async () => {
    const file = join(tempDir('orgsync-suggest-shapes-'), 'people.json');
    writeFileSync(
      file,
      JSON.stringify({
        people: [
          { personId: 'p-1', formattedName: 'Okafor, Maya', workEmail: 'maya@example.com', employmentStatus: 'full_time', termination: false, hireDate: true },
          { personId: 'p-2', formattedName: 'Lee, Marcus', workEmail: 'marcus@example.com', employmentStatus: 'part_time', termination: true, hireDate: false },
        ],
      }),
    );
    const r = await suggest('--sample', file);
    expect(r.code).toBe(0);
    expect(r.stdout.slice(r.stdout.indexOf('# found nothing for:'))).toBe(
      [
        '# found nothing for:',
        '#   display_name: "formattedName" holds names as "Family, Given" ("Okafor, Maya")',
        '#   phone: no key named like a phone (phone, mobile, cell, telephone) in the 2 records looked at',
        '#   title: no key named like a job title (title, jobTitle) in the 2 records looked at',
        '#   department: no key named like a department (department, departmentId, dept_id) in the 2 records looked at',
        '#   status: "employmentStatus" holds "full_time", "part_time", no status (active, leave, terminated)',
        '#   start_date: "hireDate" holds true/false, not dates',
        '#   end_date: "termination" holds true/false, not dates',
        '',
      ].join('\n'),
    );
    expect((parse(r.stdout) as Fragment).fields).toEqual({ id: 'personId', email: 'workEmail' });
  });
});
