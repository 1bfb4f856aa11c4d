/**
 * `orgsync sources suggest` (issue 28 point 4): a `fields:` mapping proposed from a saved response or a CSV header,
 * each line marked with how sure it is and the key it matched. Every vendor fixture and the demo's CSV export get
 * their id, name and e-mail proposed; a preset's own fields are tried first and only the rest proposed. The help
 * examples of `sources preview` and `sources suggest` run against the demo data as written.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runSourcesCli } from '../helpers/preview.js';
import { tempDir } from '../helpers/temp.js';

const VENDORS = fileURLToPath(new URL('../fixtures/vendors/', import.meta.url));
const DEMO = fileURLToPath(new URL('../../config/demo/', import.meta.url));

const suggest = (...args: string[]) => runSourcesCli(['sources', 'suggest', ...args]);

/** The proposed lines (comments before the mapping left out). */
const fieldLines = (out: string) => out.split('\n').filter((l) => l.startsWith('  '));

describe('sources suggest', () => {
  it('proposes the demo CSV export\'s columns, names as a template', async () => {
    const file = join(DEMO, 'members.csv');
    const r = await suggest('--sample', file);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        `# sources suggest: ${file}`,
        '# CSV header: 8 columns',
        "# proposed mapping (paste under the source's members:):",
        '',
        'fields:',
        '  id: employee_id # sure: column "employee_id"',
        '  display_name: "{first_name} {last_name}" # sure: columns "first_name", "last_name"',
        '  email: email # sure: column "email"',
        '  phone: phone # likely: column "phone"',
        '  title: title # sure: column "title"',
        '  department: dept_id # likely: column "dept_id"',
        '  status: status # sure: column "status"',
        '',
        // Issue 45: what it found nothing for, each with why.
        '# found nothing for:',
        '#   start_date: no column named like a hire or start date (hireDate, startDate)',
        '#   end_date: no column named like an end or termination date (terminationDate, endDate)',
        '',
      ].join('\n'),
    );
    // What it prints is YAML: the fragment parses to the mapping the demo's own config uses.
    expect(parse(r.stdout)).toEqual({ fields: { id: 'employee_id', display_name: '{first_name} {last_name}', email: 'email', phone: 'phone', title: 'title', department: 'dept_id', status: 'status' } });
  });

  const fixtures = readdirSync(VENDORS, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => readdirSync(join(VENDORS, d.name)).filter((f) => f.endsWith('.json') && !f.startsWith('departments')).map((f) => join(d.name, f)));

  it.each(fixtures)('proposes id, name and e-mail for the vendor fixture %s', async (fixture) => {
    const r = await suggest('--sample', join(VENDORS, fixture));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const proposed = (parse(r.stdout) as { fields: Record<string, string> }).fields;
    expect(Object.keys(proposed)).toEqual(expect.arrayContaining(['id', 'display_name', 'email']));
    for (const field of ['id', 'display_name', 'email']) expect(fieldLines(r.stdout).find((l) => l.startsWith(`  ${field}: `))).toMatch(/ # (sure|likely): keys? "/);
  });

  it('finds nested records and proposes nested paths in the field-path syntax', async () => {
    const scim = await suggest('--sample', join(VENDORS, 'scim/users-page-1.json'));
    expect(scim.stdout).toContain('# records found under Resources (items_path: Resources); 3 looked at\n');
    expect(fieldLines(scim.stdout)).toEqual(
      expect.arrayContaining([
        '  id: id # sure: key "id"',
        // Every record of the page has a work address; one has no primary one: the key more records fill wins.
        '  email: emails[type=work].value # sure: key "emails[type=work].value"',
        '  phone: phoneNumbers[type=mobile].value # sure: key "phoneNumbers[type=mobile].value"',
        '  status: active # likely: key "active"',
      ]),
    );
    const personio = await suggest('--sample', join(VENDORS, 'personio/employees-offset-0.json'));
    expect(fieldLines(personio.stdout)).toEqual(
      expect.arrayContaining([
        '  id: attributes.id.value # sure: key "attributes.id.value"',
        '  display_name: "{attributes.first_name.value} {attributes.last_name.value}" # sure: keys "attributes.first_name.value", "attributes.last_name.value"',
        '  email: attributes.email.value # sure: key "attributes.email.value"',
        // Issue 45: a department given by its id and its name is proposed as both, so the id stays when the name changes.
        '  department: attributes.department.value.attributes.id # sure: key "attributes.department.value.attributes.id"',
        '  department_name: attributes.department.value.attributes.name # sure: key "attributes.department.value.attributes.name"',
        '  start_date: attributes.hire_date.value # sure: key "attributes.hire_date.value"',
      ]),
    );
    const demo = await suggest('--sample', join(DEMO, 'employees.json'));
    expect(demo.stdout).toContain('# records found under data.employees (items_path: data.employees); 60 looked at\n');
    expect(fieldLines(demo.stdout)).toContain('  email: workEmail # sure: key "workEmail"');
  });

  it('reads HiBob-style flat path keys and marks a key no record fills as a guess', async () => {
    const dir = tempDir('orgsync-suggest-');
    const file = join(dir, 'people.json');
    const v = (value: unknown) => ({ value });
    writeFileSync(
      file,
      JSON.stringify({
        employees: [{ '/root/id': v('3332883884017713238'), '/root/firstName': v('Olivia'), '/root/surname': v('Brown'), '/root/email': v('olivia.brown@bob.example'), '/work/startDate': v('2023-04-03'), '/internal/terminationDate': v(null) }],
      }),
    );
    const r = await suggest('--sample', file);
    expect(fieldLines(r.stdout)).toEqual([
      '  id: /root/id.value # sure: key "/root/id.value"',
      '  display_name: "{/root/firstName.value} {/root/surname.value}" # sure: keys "/root/firstName.value", "/root/surname.value"',
      '  email: /root/email.value # sure: key "/root/email.value"',
      '  start_date: /work/startDate.value # sure: key "/work/startDate.value"',
      '  end_date: /internal/terminationDate.value # guess: key "/internal/terminationDate.value"',
    ]);
  });

  it('with --preset: says which of the preset\'s fields find values and proposes only the rest', async () => {
    const dir = tempDir('orgsync-suggest-');
    const file = join(dir, 'report.json');
    // A Workday report: the preset's candidate columns find most fields; Job_Profile is a title column it does not know.
    const entry = (id: string, name: string, email: string, hire: string) => ({ Worker_ID: id, Full_Name: name, Work_Email: email, Job_Profile: 'Engineer', Supervisory_Organization: 'Engineering', Hire_Date: hire, Active_Status: '1' });
    writeFileSync(file, JSON.stringify({ Report_Entry: [entry('21001', 'Logan McNeil', 'lmcneil@workday.example', '2019-03-01'), entry('21002', 'Ann Lee', 'alee@workday.example', '2027-01-04')] }));
    const r = await suggest('--sample', file, '--preset', 'workday-raas');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.slice(1, 10)).toEqual([
      '# records found under Report_Entry (items_path: Report_Entry); 2 looked at',
      '# preset workday-raas: its fields that find values here (kept as they are):',
      '#   id: Employee_ID | Worker_ID | Employee_Id (2 of 2 records)',
      '#   display_name: Preferred_Name | Full_Name | Legal_Name | Worker | {First_Name} {Last_Name} (2 of 2 records)',
      '#   email: Email_Address | Primary_Work_Email | Work_Email | Email (2 of 2 records)',
      '#   department_path: Supervisory_Organization | Department | Team_Name (2 of 2 records)',
      '#   status: Active_Status | Worker_Status | Employee_Status (2 of 2 records)',
      '#   start_date: Hire_Date | Start_Date | Original_Hire_Date (2 of 2 records)',
      '# preset workday-raas: finds nothing for phone (Mobile_Phone | Primary_Work_Phone | Work_Phone), title (Business_Title | Job_Title), end_date (Termination_Date | End_Date)',
    ]);
    expect(fieldLines(r.stdout)).toEqual(['  title: Job_Profile # likely: key "Job_Profile"']);
  });

  it('names the file and what it looked for when the sample cannot be used (SAMPLE_INVALID, exit 2)', async () => {
    const dir = tempDir('orgsync-suggest-');
    const missing = await suggest('--sample', join(dir, 'none.json'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`orgsync: sources suggest: ${join(dir, 'none.json')}: cannot read the file: ENOENT\n`);
    writeFileSync(join(dir, 'one.json'), '{"total": 1, "next": null}');
    const noList = await suggest('--sample', join(dir, 'one.json'));
    expect(noList.code).toBe(2);
    expect(noList.stderr).toBe(
      `orgsync: sources suggest: ${join(dir, 'one.json')}: no list of records found: the file is neither an array of objects nor an object with one under value, Resources, employees, users, Report_Entry, d.results, data, results, items, records, people, workers, departments (also one level down, as in data.employees)\n`,
    );
    writeFileSync(join(dir, 'bad.json'), '{"value": [');
    const bad = await suggest('--sample', join(dir, 'bad.json'));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(new RegExp(`^orgsync: sources suggest: ${join(dir, 'bad.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not JSON: `));
    const preset = await suggest('--sample', join(DEMO, 'members.csv'), '--preset', 'peoplesoft');
    expect(preset.code).toBe(2);
    expect(preset.stderr).toMatch(/^orgsync: sources suggest: --preset peoplesoft: no such preset \(presets: microsoft-graph, scim, .*workday-raas.*\)\n$/);
  });
});

describe('the help examples of sources preview and sources suggest', () => {
  it.each(['preview', 'suggest'])('every example of `sources %s --help` runs against the demo data as written', async (command) => {
    const help = await runSourcesCli(['sources', command, '--help']);
    expect(help.code).toBe(0);
    const examples = help.stdout.split('\n').filter((l) => l.startsWith('  $ orgsync '));
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples) {
      // Paths in the examples are relative to the checkout, where the tests run.
      const r = await runSourcesCli(example.replace('  $ orgsync ', '').split(' '));
      expect({ example, code: r.code, stderr: r.stderr }).toEqual({ example, code: 0, stderr: '' });
      expect(r.stdout).not.toBe('');
    }
  });
});
