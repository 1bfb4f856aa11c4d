/** A CSV org and config files for process-level fault tests (the CSV writer is the e2e tests' own). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeCsvOrg } from '../e2e/csv-org.js';
import { org, type OrgState } from '../e2e/harness.js';
import { TEST_KEYS } from '../helpers/emulator.js';

export { writeCsvOrg };

/** An org of `departments` departments and `members` members (ids and e-mails start with `prefix`), every title `title`. */
export function titledOrg(opts: { departments: number; members: number; title: string; prefix?: string }): { desired: OrgState; titles: Record<string, string> } {
  const p = opts.prefix ?? '';
  const desired = org({
    departments: Array.from({ length: opts.departments }, (_, k) => [`${p}d${k}`, `${p}Dept ${k}`] as [string, string]),
    members: Array.from({ length: opts.members }, (_, k) => [`${p}m${k}`, `Person ${k}`, `${p}m${k}@acme.test`, `${p}d${k % opts.departments}`] as [string, string, string, string]),
  });
  const titles = Object.fromEntries([...desired.members].map((m) => [m.source_id, opts.title]));
  for (const m of desired.members) m.title = opts.title;
  return { desired, titles };
}

/** Writes `<name>.yaml` in `dir` for the CSV org there (state DB ./state.db); returns its path. */
export function writeFaultConfig(
  dir: string,
  name: string,
  opts: { baseUrl: string; platform?: Record<string, string | number>; state?: Record<string, string | number>; top?: string },
): string {
  const block = (o: Record<string, string | number> | undefined) => Object.entries(o ?? {}).map(([k, v]) => `\n  ${k}: ${v}`).join('');
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `platform:
  base_url: ${opts.baseUrl}
  api_key: ${TEST_KEYS.acmeRw}
  requests_per_second: 2000${block(opts.platform)}
state:
  path: ${opts.state?.path ?? './state.db'}${block(Object.fromEntries(Object.entries(opts.state ?? {}).filter(([k]) => k !== 'path')))}
sync:
  id: hr-sync
  delete_threshold: { max_count: 500, max_percent: 100 }
sources:
  - name: hr
    type: csv
    departments: { file: departments.csv, fields: { id: id, name: name } }
    members: { file: members.csv, fields: { id: id, display_name: name, email: email, title: title, department: dept } }
log:
  level: info
${opts.top ?? ''}`,
  );
  return file;
}
