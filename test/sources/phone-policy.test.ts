/**
 * Issue 15, point 10: an invalid phone on a member with a valid e-mail drops the phone (warning
 * invalid_phone_dropped, listed by `sources check`, counted in the plan) instead of quarantining the member;
 * `phone: [telephoneNumber, mobile]` takes the first VALID value; `phone_policy: quarantine` keeps the old behaviour;
 * a member left with neither valid contact is quarantined as no_contact. Real CSV connector, real CLI, and the plan
 * against the emulator over loopback.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { metricsRunObserver } from '../../src/daemon/daemon.js';
import { countChanges, type Plan, type PlatformMember } from '../../src/domain/index.js';
import { OrgsyncMetrics } from '../../src/observability/metrics.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS } from '../helpers/emulator.js';
import { cli } from '../helpers/cli.js';
import { read } from './support.js';
import { tempDir } from '../helpers/temp.js';

const MEMBERS = `id,name,email,tel,mobile,dept
E1,Ann Lee,ann@acme.test,12345,,eng
E2,Bob Roy,bob@acme.test,415 555 0132,,eng
E3,Cid Moe,,12345,,eng
E4,Dee Fox,dee@acme.test,+1 408 136-9364,+1 510 729-3926,eng
E5,Eve Kim,,,+1 510 729-3927,eng
E6,Fay Orr,fay@acme.test,+1 408 136-9364,999,eng
`;

let dir: string;
beforeEach(() => {
  dir = tempDir('orgsync-phones-');
  writeFileSync(join(dir, 'departments.csv'), 'id,name\neng,Engineering\n');
  writeFileSync(join(dir, 'members.csv'), MEMBERS);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const source = (over: Record<string, unknown> = {}) => ({
  name: 'hr',
  type: 'csv',
  phone_region: 'US',
  departments: { file: 'departments.csv', fields: { id: 'id', name: 'name' } },
  members: { file: 'members.csv', fields: { id: 'id', display_name: 'name', email: 'email', phone: ['tel', 'mobile'], department: 'dept' } },
  ...over,
});

const DROPPED = (raw: string) => `invalid phone "${raw}": phone dropped, the member is kept without it (phone_policy: drop)`;

describe('phone_policy: drop (the default)', () => {
  it('drops an invalid phone beside a valid e-mail, takes the first valid alternative, and quarantines a member left without contact', async () => {
    const s = await read([source()], dir);
    expect(Object.fromEntries([...s.members].map((m) => [m.source_id, [m.email ?? null, m.phone ?? null]]))).toEqual({
      E1: ['ann@acme.test', null],
      E2: ['bob@acme.test', '+14155550132'],
      // The first alternative is invalid, the second valid: the second wins.
      E4: ['dee@acme.test', '+15107293926'],
      E5: [null, '+15107293927'],
      E6: ['fay@acme.test', null],
    });
    expect(s.warnings).toEqual([
      { source: 'hr', entity: 'members', source_id: 'E1', location: 'members.csv:2', code: 'invalid_phone_dropped', message: DROPPED('12345'), problem: 'invalid phone "12345"' },
      // Both alternatives invalid: the first one's problem is reported.
      { source: 'hr', entity: 'members', source_id: 'E6', location: 'members.csv:7', code: 'invalid_phone_dropped', message: DROPPED('+1 408 136-9364'), problem: 'invalid phone "+1 408 136-9364"' },
    ]);
    expect(s.quarantine).toEqual([
      { source: 'hr', entity: 'members', source_id: 'E3', location: 'members.csv:4', reason: 'no_contact', message: 'member has neither e-mail nor a valid phone (the platform needs one): invalid phone "12345"' },
    ]);
  });

  it('counts the dropped phones per source and code in orgsync_source_warnings', async () => {
    const s = await read([source()], dir);
    const metrics = new OrgsyncMetrics({ build: { version: 't' } });
    const plan = { changes: [], warnings: [], withheld: [], counts: countChanges([]) } as unknown as Plan;
    metricsRunObserver(metrics).onPlan!(plan, s);
    const text = await metrics.registry.metrics();
    expect(text).toContain('# TYPE orgsync_source_warnings gauge');
    expect(text).toContain('orgsync_source_warnings{source="hr",code="invalid_phone_dropped"} 2');
    expect(text).toContain('orgsync_quarantined_records{source="hr",reason="no_contact"} 1');
  });

  it('sources check lists the dropped phones and exits as the quarantine says (no_contact: 4)', async () => {
    const file = join(dir, 'orgsync.yaml');
    writeFileSync(
      file,
      `platform:\n  base_url: http://127.0.0.1:1\n  api_key: ek_x\nlog:\n  level: silent\nsources:\n  - name: hr\n    type: csv\n    phone_region: US\n    departments: { file: departments.csv, fields: { id: id, name: name } }\n    members: { file: members.csv, fields: { id: id, display_name: name, email: email, phone: [tel, mobile], department: dept } }\n`,
    );
    const r = await cli('sources', 'check', '--config', file);
    expect(r.code).toBe(4);
    const csv = 'members.csv';
    expect(r.stdout.split('\n').slice(3)).toEqual([
      'quarantine: 1 record (no_contact 1)',
      `  members "E3" (source hr, ${csv}:4): no_contact: member has neither e-mail nor a valid phone (the platform needs one): invalid phone "12345"`,
      'warnings: 2 (invalid_phone_dropped 2)',
      `  members "E1" (source hr, ${csv}:2): invalid_phone_dropped: ${DROPPED('12345')}`,
      `  members "E6" (source hr, ${csv}:7): invalid_phone_dropped: ${DROPPED('+1 408 136-9364')}`,
      '',
    ]);
    const json = await cli('sources', 'check', '--config', file, '--json');
    const doc = JSON.parse(json.stdout) as { warnings: { source_id: string; code: string }[]; quarantined: number };
    expect(doc.warnings.map((w) => [w.source_id, w.code])).toEqual([
      ['E1', 'invalid_phone_dropped'],
      ['E6', 'invalid_phone_dropped'],
    ]);
    expect(doc.quarantined).toBe(1);
  });

  it('sync creates the member without the phone; the plan counts the dropped phone as a warning', async () => {
    const emulator = await startTestEmulator(orgTestSeed());
    try {
      writeFileSync(join(dir, 'members.csv'), 'id,name,email,tel,mobile,dept\nE1,Ann Lee,ann@acme.test,12345,,eng\n');
      const file = join(dir, 'orgsync.yaml');
      writeFileSync(
        file,
        `platform:\n  base_url: ${emulator.url}\n  api_key: ${TEST_KEYS.acmeRw}\nstate:\n  path: ./state.db\nsync:\n  id: hr-sync\nlog:\n  level: silent\nsources:\n  - name: hr\n    type: csv\n    phone_region: US\n    departments: { file: departments.csv, fields: { id: id, name: name } }\n    members: { file: members.csv, fields: { id: id, display_name: name, email: email, phone: [tel, mobile], department: dept } }\n`,
      );
      const plan = await cli('plan', '--config', file, '--output', 'json');
      expect(plan.code).toBe(0);
      const doc = JSON.parse(plan.stdout) as { summary: { warnings: number; quarantined: number }; warnings: { code: string; third_id: string; message: string }[] };
      expect(doc.summary).toMatchObject({ warnings: 1, quarantined: 0 });
      expect(doc.warnings).toEqual([expect.objectContaining({ code: 'invalid_phone_dropped', third_id: 'E1', message: `hr members.csv:2: ${DROPPED('12345')}` })]);
      expect((await cli('sync', '--config', file)).code).toBe(0);
      const res = await emulator.request('GET', '/api/external/v1/org/members?limit=200', { token: TEST_KEYS.acmeRw });
      const ann = (res.body.items as PlatformMember[]).find((m) => m.third_user_id === 'E1');
      expect(ann).toMatchObject({ email: 'ann@acme.test', phone: '', status: 'active' });
    } finally {
      await emulator.close();
    }
  });
});

describe('phone_policy: quarantine', () => {
  it('quarantines a member whose phone is invalid even with a valid e-mail; the first valid alternative still wins', async () => {
    const s = await read([source({ phone_policy: 'quarantine' })], dir);
    expect([...s.members].map((m) => [m.source_id, m.phone ?? null])).toEqual([
      ['E2', '+14155550132'],
      ['E4', '+15107293926'],
      ['E5', '+15107293927'],
    ]);
    expect(s.quarantine.map((q) => [q.source_id, q.reason, q.message])).toEqual([
      ['E1', 'invalid_phone', 'invalid phone "12345"'],
      ['E3', 'invalid_phone', 'invalid phone "12345"'],
      ['E6', 'invalid_phone', 'invalid phone "+1 408 136-9364"'],
    ]);
    expect(s.warnings).toEqual([]);
  });

  it('rejects an unknown phone_policy naming the path and the choices', async () => {
    const file = join(dir, 'orgsync.yaml');
    writeFileSync(file, `platform:\n  base_url: http://127.0.0.1:1\n  api_key: ek_x\nsources:\n  - name: hr\n    type: csv\n    phone_policy: ignore\n    members: { file: members.csv, fields: { id: id, display_name: name, email: email } }\n`);
    const r = await cli('sources', 'check', '--config', file);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^orgsync: ${file.replace(/[.]/g, '\\.')}:7:5: sources\\[0\\]\\.phone_policy: .*"drop".*"quarantine"`));
  });
});
