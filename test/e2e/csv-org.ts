/** Writes an org as the CSV files and config of a `type: csv` source, for CLI and process-level tests. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OrgState } from './harness.js';
import { writeCsv } from '../helpers/fixtures.js';

/** Writes departments.csv, positions.csv and members.csv for `desired` into `dir`. */
export function writeCsvOrg(dir: string, desired: OrgState, titles: Record<string, string> = {}): void {
  writeCsv(join(dir, 'departments.csv'), ['id', 'name', 'parent'], desired.departments.map((d) => [d.source_id, d.name, d.parent_source_id]));
  writeCsv(join(dir, 'positions.csv'), ['id', 'name'], desired.positions.map((p) => [p.source_id, p.name]));
  writeCsv(
    join(dir, 'members.csv'),
    ['id', 'name', 'email', 'title', 'dept', 'status'],
    desired.members.map((m) => [m.source_id, m.display_name, m.email, titles[m.source_id] ?? m.title, m.department_source_id, m.status]),
  );
}

/** A config file for the CSV org in `dir`; returns its path. */
export function writeCsvConfig(dir: string, opts: { baseUrl: string; apiKey: string; sync?: string; extra?: string; platformExtra?: string }): string {
  const file = join(dir, 'orgsync.yaml');
  writeFileSync(
    file,
    `platform:
  base_url: ${opts.baseUrl}
  api_key: ${opts.apiKey}
  requests_per_second: 2000
${opts.platformExtra ?? ''}state:
  path: ./state.db
sync:
  ${opts.sync ?? 'id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }'}
sources:
  - name: hr
    type: csv
    departments: { file: departments.csv, fields: { id: id, name: name, parent: parent } }
    positions: { file: positions.csv, fields: { id: id, name: name } }
    members: { file: members.csv, fields: { id: id, display_name: name, email: email, title: title, department: dept, status: status } }
log:
  level: info
${opts.extra ?? ''}`,
  );
  return file;
}
