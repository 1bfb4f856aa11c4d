/** Shared pieces of the daemon end-to-end tests: the demo data in a temp folder, a config for it, polling and status reads (the captured CLI context is test/helpers/cli.ts). */
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from '../helpers/temp.js';

export const repoRoot = resolve(import.meta.dirname, '../..');
export const demoDir = join(repoRoot, 'config/demo');
export const DEMO_KEY = 'ek_demo_4f8a2c9e71b3d6054e2a';

/** The demo tenant with rate limits off (tests do not need the real pacing). */
export function demoSeed(): Record<string, unknown> {
  return {
    tenants: [
      {
        id: 2001,
        name: 'Demo Corp',
        api_keys: [{ key: DEMO_KEY, scopes: ['tenant.org.read', 'tenant.org.write'] }],
        members: [{ display_name: 'Dana Admin', email: 'dana.admin@demo-corp.test', roles: ['tenant.admin'] }],
      },
    ],
    limits: { per_api_key: 0, per_session_token: 0, per_tenant: 0 },
  };
}

/** A temp folder with a copy of the demo's HR files and an orgsync.yaml for them; returns the folder. */
export function demoWorkspace(opts: { url: string; extra?: string; platformExtra?: string; apiKeyLine?: string; sourcesYaml?: string; logLevel?: string }): string {
  const dir = tempDir('orgsync-daemon-');
  for (const f of ['departments.csv', 'positions.csv', 'members.csv', 'employees.json']) copyFileSync(join(demoDir, f), join(dir, f));
  const sources =
    opts.sourcesYaml ??
    `sources:
  - name: hr
    type: csv
    phone_region: US
    departments: { file: departments.csv, fields: { id: dept_id, name: name, parent: parent_id } }
    positions: { file: positions.csv, fields: { id: pos_id, name: name } }
    members:
      file: members.csv
      fields: { id: employee_id, display_name: "{first_name} {last_name}", email: email, phone: phone, title: title, department: dept_id, status: status }
      status_map: { active: active, leave: suspended, terminated: left }
  - name: hris
    type: hris-json
    phone_region: US
    members:
      file: employees.json
      items_path: data.employees
      fields: { id: id, display_name: "{firstName} {lastName}", email: workEmail, phone: mobilePhone, title: jobTitle, department: department.id, status: employmentStatus }
      status_map: { Active: active, Inactive: left }
`;
  writeFileSync(
    join(dir, 'orgsync.yaml'),
    `platform:
  base_url: ${opts.url}
  ${opts.apiKeyLine ?? `api_key: ${DEMO_KEY}`}
  requests_per_second: 2000
${opts.platformExtra ?? ''}state:
  path: ./state/orgsync.db
sync:
  id: daemon-e2e
${sources}schedule: "0 0 1 1 *"
metrics:
  listen: 127.0.0.1:0
log:
  level: ${opts.logLevel ?? 'info'}
  format: json
${opts.extra ?? ''}`,
  );
  return dir;
}

/** Polls `check` until it returns a value (bounded attempts, short pauses); throws naming `what` otherwise. */
export async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, attempts = 2400): Promise<T> {
  let last: unknown;
  for (let i = 0; i < attempts; i += 1) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
}

/** GET a JSON document. */
export async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The status document's runs, newest first. */
export type StatusRun = { id: string; trigger: string; result: string; summary: Record<string, unknown> | null; error: string | null };

/** True when dist/cli.js exists (subprocess tests need the build; .ci/run builds before testing). */
export function haveBuild(): boolean {
  const ok = existsSync(join(repoRoot, 'dist/cli.js'));
  if (!ok) {
    const msg = 'dist/cli.js is missing (run npm run build); the subprocess tests of the daemon need it';
    if (process.env.CI === 'true') throw new Error(msg);
    console.warn(`NOTICE: ${msg}; skipping them.`);
  }
  return ok;
}
