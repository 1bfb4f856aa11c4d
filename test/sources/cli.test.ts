import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { FIXTURES } from './support.js';
import { tempDir } from '../helpers/temp.js';

/** The CLI in-process (test/helpers/cli.ts), its output named as the assertions read it. */
async function cli(args: string[], env: Record<string, string> = {}) {
  const r = await runCli(args, env);
  return { code: r.code, out: r.stdout, err: r.stderr };
}

function configFile(sources: string): string {
  const dir = tempDir('orgsync-check-');
  const file = join(dir, 'orgsync.yaml');
  writeFileSync(file, `platform:\n  base_url: http://127.0.0.1:1\nlog:\n  level: silent\nsources:\n${sources}`);
  return file;
}

const csv = (members: string, departments = 'good/departments.csv') => `  - name: hr
    type: csv
    phone_region: US
    departments:
      file: ${join(FIXTURES, departments)}
      fields: { id: dept_id, name: name, parent: parent_id }
    positions:
      file: ${join(FIXTURES, 'good/positions.csv')}
      fields: { id: pos_id, name: name }
    members:
      file: ${join(FIXTURES, members)}
      fields: { id: employee_id, display_name: "{first_name} {last_name}", email: email, phone: phone, title: title, department: dept_id, status: status }
      status_map: { active: active, leave: suspended, terminated: left }
`;

describe('orgsync sources check', () => {
  it('prints counts and exits 0 when nothing is quarantined', async () => {
    const file = configFile(csv('good/members.csv'));
    const r = await cli(['sources', 'check', '--config', file]);
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      `sources check: ${file}\nsource hr (csv): 4 departments, 2 positions, 5 members, 0 quarantined\ndesired: 4 departments, 2 positions, 5 members (provided: departments, positions, members)\nquarantine: none\n`,
    );
    expect(r.err).toBe('');
  });

  it('prints the quarantine report and exits 4 when records were quarantined', async () => {
    const file = configFile(csv('malformed/members-two-depts.csv', 'malformed/departments-cycle.csv'));
    const r = await cli(['sources', 'check', '-c', file]);
    expect(r.code).toBe(4);
    const dep = join(FIXTURES, 'malformed/departments-cycle.csv');
    const mem = join(FIXTURES, 'malformed/members-two-depts.csv');
    expect(r.out.split('\n').slice(1)).toEqual([
      'source hr (csv): 4 departments, 2 positions, 3 members, 0 quarantined',
      'desired: 1 department, 2 positions, 1 member (provided: departments, positions, members)',
      'quarantine: 5 records (cycle 2, parent_quarantined 1, department_quarantined 2)',
      `  departments "D2" (source hr, ${dep}:3): cycle: the department hierarchy has a cycle: "D2" -> "D3" -> "D2"`,
      `  departments "D3" (source hr, ${dep}:4): cycle: the department hierarchy has a cycle: "D2" -> "D3" -> "D2"`,
      `  departments "D4" (source hr, ${dep}:5): parent_quarantined: parent department "D3" is quarantined`,
      `  members "E2" (source hr, ${mem}:3): department_quarantined: department "D2" is quarantined`,
      `  members "E3" (source hr, ${mem}:4): department_quarantined: department "D3" is quarantined`,
      // Mapped columns empty in every row read (issue 45): named, never an exit code.
      'fields that matched nothing: 2 (members.phone, members.title)',
      '  members.phone (source hr): matched nothing in the 3 records read: "phone": is empty or missing',
      '  members.title (source hr): matched nothing in the 3 records read: "title": is empty or missing',
      '',
    ]);
  });

  it('prints JSON with --json', async () => {
    const file = configFile(csv('malformed/members-two-depts.csv', 'malformed/departments-orphan.csv'));
    const r = await cli(['sources', 'check', '--config', file, '--json']);
    expect(r.code).toBe(4);
    const doc = JSON.parse(r.out) as { desired: unknown; quarantined: number; quarantine: { reason: string }[]; sources: unknown[] };
    expect(doc.desired).toEqual({ departments: 1, positions: 2, members: 1 });
    expect(doc.quarantine.map((q) => q.reason)).toEqual(['unknown_parent', 'parent_quarantined', 'department_quarantined', 'department_quarantined']);
    const gaps = ['phone', 'title'].map((field) => ({ entity: 'members', field, records: 3, paths: [{ path: field, why: 'is empty or missing' }] }));
    expect(doc.sources).toEqual([{ name: 'hr', type: 'csv', departments: 3, positions: 2, members: 3, quarantined: 0, excluded: { departments: 0, positions: 0, members: 0 }, field_gaps: gaps }]);
    expect((doc as unknown as { fields_matched_nothing: unknown[] }).fields_matched_nothing).toEqual(gaps.map((g) => ({ source: 'hr', ...g })));
  });

  it('exits 2 with one line naming file, line and column when a source file is malformed input', async () => {
    const file = configFile(csv('malformed/truncated-quote.csv'));
    const r = await cli(['sources', 'check', '--config', file]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      `orgsync: source "hr": members: ${join(FIXTURES, 'malformed/truncated-quote.csv')}:3:2 (line 3, column 2 "first_name"): the file ends inside a quoted field (truncated or bad quoting): Quote Not Closed: the parsing is finished with an opening quote at line 3\n`,
    );
  });

  it('exits 1 with one line when a source cannot be read', async () => {
    const file = configFile(csv('malformed/no-such-file.csv'));
    const r = await cli(['sources', 'check', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toBe(`orgsync: source "hr": members: ${join(FIXTURES, 'malformed/no-such-file.csv')}: cannot read ${join(FIXTURES, 'malformed/no-such-file.csv')}: ENOENT\n`);
  });

  it('exits 2 on a config error naming the path', async () => {
    const file = configFile(`  - name: hr\n    type: csv\n    members:\n      file: m.csv\n      fields: { id: a, display_name: b, emial: c }\n`);
    const r = await cli(['sources', 'check', '--config', file]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`orgsync: ${file}:10:41: sources[0].members.fields.emial: unknown key; did you mean \`email\`?\n`);
  });

  it('exits 2 on an unknown source type', async () => {
    const file = configFile(`  - name: hr\n    type: xml\n`);
    const r = await cli(['sources', 'check', '--config', file]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`^orgsync: ${file.replace(/[.]/g, '\\.')}:7:5: sources\\[0\\]\\.type: `));
  });
});
