/**
 * Issue 44 point 3: static log messages, values in fields. `orgsync sync` (JSON log lines on stderr, log.personal_data
 * false) runs into every kind of personal warning at once: unpatchable drift (an e-mail changed in HR), a record with
 * its third id made by hand, a new hire whose e-mail a hand-made account holds, a quarantined source record, an owned
 * member kept because its source row is quarantined, and a create the platform refuses. The whole log is searched for
 * every name and e-mail involved (source and platform side): none appears. With log.personal_data true the same
 * sentences come back in `detail`, so the search above is not blind.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNKNOWN_WARNING_LOG_MESSAGE, WARNING_LOG_MESSAGES } from '../../src/planner/warning-messages.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { cli } from '../helpers/cli.js';
import { writeCsv } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';
import { writeCsvConfig, writeCsvOrg } from '../e2e/csv-org.js';
import { ADMIN, org } from '../e2e/harness.js';

/** Everyone's names and e-mails, as the sources and the platform hold them. */
const PEOPLE = {
  drift: { id: 'u1', name: 'Ann Lindqvist', email: 'ann.lindqvist@acme.test', newEmail: 'ann.lindqvist-berg@acme.test' },
  kept: { id: 'u2', name: 'Quentin Keeper', email: 'quentin.keeper@acme.test' },
  sameId: { id: 'u3', name: 'Bob Sourceson', email: 'bob.sourceson@acme.test', byHand: 'Bob Handmade', byHandEmail: 'bob.handmade@acme.test' },
  sameEmail: { id: 'u4', name: 'Cid Newhire', email: 'cid.shared@acme.test', byHand: 'Cid Handmade' },
  quarantined: { id: 'u5', name: 'Dora Broken', email: 'dora.broken@@acme.test' },
  failing: { id: 'u6', name: 'Eve Refused', email: 'eve.refused@acme.test' },
};

/** Every name and e-mail of PEOPLE (an e-mail also by its local part: a message might quote only that). */
function searched(): string[] {
  const out = new Set<string>();
  for (const p of Object.values(PEOPLE)) {
    for (const [k, v] of Object.entries(p)) if (k !== 'id') out.add(v);
  }
  for (const v of [...out]) if (v.includes('@')) out.add(v.slice(0, v.indexOf('@')));
  return [...out];
}

/** The values of `people` that `text` holds (case-insensitively). */
const named = (text: string, people: readonly string[]): string[] => people.filter((p) => text.toLowerCase().includes(p.toLowerCase()));

describe('static log messages: no name or e-mail in any log line', { timeout: 180_000 }, () => {
  let emulator: TestEmulator;
  let dir: string;
  let quiet: { code: number; stdout: string; stderr: string };
  let loud: { code: number; stdout: string; stderr: string };

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await emulator.request(method, `/api/external/v1${path}`, { token: TEST_KEYS.acmeRw, ...(body !== undefined ? { body } : {}) });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  const writeMembers = (rows: string[][]) => writeCsv(join(dir, 'members.csv'), ['id', 'name', 'email', 'title', 'dept', 'status'], rows);
  const configWith = (personalData: boolean) =>
    writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw, extra: `  format: json\n  personal_data: ${personalData}\n` });

  beforeAll(async () => {
    emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
    dir = tempDir('orgsync-log-messages-');
    const { drift, kept } = PEOPLE;
    writeCsvOrg(dir, org({ departments: [['eng', 'Engineering']], members: [[drift.id, drift.name, drift.email, 'eng'], [kept.id, kept.name, kept.email, 'eng']] }));
    const first = await cli('sync', '--config', configWith(false));
    expect(first.code).toBe(0);

    // Made by hand on the platform: one with u3's third id, one with u4's e-mail.
    const { sameId, sameEmail, quarantined, failing } = PEOPLE;
    await api('POST', '/org/members', { display_name: sameId.byHand, email: sameId.byHandEmail, third_user_id: sameId.id });
    await api('POST', '/org/members', { display_name: sameEmail.byHand, email: sameEmail.email });
    // HR: u1's e-mail changed (the platform cannot patch it), u2's row broke (quarantined, kept), three newcomers.
    writeMembers([
      [drift.id, drift.name, drift.newEmail, '', 'eng', 'active'],
      [kept.id, kept.name, 'not-an-address', '', 'eng', 'active'],
      [sameId.id, sameId.name, sameId.email, '', 'eng', 'active'],
      [sameEmail.id, sameEmail.name, sameEmail.email, '', 'eng', 'active'],
      [quarantined.id, quarantined.name, quarantined.email, '', 'eng', 'active'],
      [failing.id, failing.name, failing.email, '', 'eng', 'active'],
    ]);
    // The platform refuses every new member (400, not retried): u6's create fails.
    const fault = await emulator.request('PUT', '/_emulator/faults', { token: ADMIN, body: { probability: 1, statuses: [400], methods: ['POST'], paths: '/org/members$' } });
    expect(fault.status).toBeLessThan(300);

    quiet = await cli('sync', '--config', configWith(false));
    loud = await cli('plan', '--config', configWith(true));
  }, 120_000);
  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the run met every case: drift, both conflicts, quarantine (new and kept) and a failed create', () => {
    expect(quiet.code).toBe(4);
    const lines = quiet.stderr.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const warned = lines.filter((l) => typeof l.code === 'string').map((l) => `${String(l.code)}${l.blocks ? `/${String(l.blocks)}` : ''} ${String(l.third_id)}`);
    expect(warned.sort()).toEqual(['not_owned_conflict/contact_not_owned u4', 'not_owned_conflict/not_owned_conflict u3', 'quarantined_kept u2', 'unpatchable_drift/unpatchable_drift u1']);
    expect(lines.filter((l) => l.msg === 'change not applied').map((l) => l.third_id)).toEqual(['u6']);
    expect(lines.find((l) => l.msg === 'records quarantined')).toMatchObject({ quarantined: 2 });
    // Each warning's message is its code's static sentence.
    for (const l of lines.filter((x) => typeof x.code === 'string')) expect(Object.values(WARNING_LOG_MESSAGES)).toContain(l.msg);
  });

  it('no log line names anyone, at log.personal_data false', () => {
    const log = quiet.stderr;
    expect(log.length).toBeGreaterThan(1000);
    expect(named(log, searched())).toEqual([]);
    for (const line of log.trim().split('\n')) expect(line.startsWith('{') || line.startsWith('orgsync: ')).toBe(true);
    expect(log).not.toContain('"detail"');
  });

  it('with log.personal_data true the sentences are back in detail (the search above can find them)', () => {
    const details = loud.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => (JSON.parse(l) as { detail?: string }).detail)
      .filter((d): d is string => typeof d === 'string');
    const all = details.join('\n');
    for (const v of [PEOPLE.drift.email, PEOPLE.drift.newEmail, PEOPLE.kept.name, PEOPLE.sameId.byHand, PEOPLE.sameEmail.byHand]) expect(all).toContain(v);
    // The terminal summary, for the operator who ran the command, names the blocked people as before.
    expect(quiet.stdout).toContain(PEOPLE.sameId.byHand);
  });

  it('every warning code has a static log message without a placeholder or a quote', () => {
    // The files that make plan warnings (the planner's rows, the sources' dropped-value warnings).
    const codes = new Set<string>();
    for (const file of ['src/planner/context.ts', 'src/planner/departments/present-rows.ts', 'src/planner/departments/department-index.ts', 'src/planner/departments/create-rows.ts', 'src/planner/members/absent-rows.ts', 'src/planner/members/present-rows.ts', 'src/planner/members/member-fields.ts', 'src/planner/members/types.ts', 'src/planner/order.ts', 'src/planner/positions/rows.ts', 'src/desired/mapping.ts']) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/code: '([a-z_]+)'|blocks: '([a-z_]+)'|(?:NOT_OWNED_ABSENT|DEPARTMENT_NAME_TAKEN) = '([a-z_]+)'/g)) codes.add(m[1] ?? m[2] ?? m[3]!);
    }
    expect(codes.size).toBeGreaterThanOrEqual(11);
    expect([...codes].filter((c) => !(c in WARNING_LOG_MESSAGES))).toEqual([]);
    for (const message of [...Object.values(WARNING_LOG_MESSAGES), UNKNOWN_WARNING_LOG_MESSAGE]) expect(message).not.toMatch(/["${}]/);
  });
});
