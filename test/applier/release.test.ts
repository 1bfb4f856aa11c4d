/**
 * Release as a change the applier executes (src/applier/release.ts): an `update` marked `releases`. Against the
 * emulator: a member's ownership record and a department's managed_by are given up and the missing-run counts
 * forgotten; a dry run writes nothing and says it would apply; the counts keep the plan's five operations.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appliedChangeLine, applyChanges, isReleaseChange, type ReleaseChange } from '../../src/applier/index.js';
import { CHANGE_OPS, changeLine, type Change, type PlatformDepartment } from '../../src/domain/index.js';
import { TrustStateStore } from '../../src/mirror/trust-state.js';
import { systemClock } from '../../src/shared/clock.js';
import type { Logger } from '../../src/shared/logger.js';
import { org, SyncWorld } from '../e2e/harness.js';

let world: SyncWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** A logger that keeps every line's message and fields. */
function capture(): { logger: Logger; lines: { msg: string | undefined; fields: Record<string, unknown> }[] } {
  const lines: { msg: string | undefined; fields: Record<string, unknown> }[] = [];
  const at = () => (fields: object, msg?: string) => lines.push({ msg, fields: fields as Record<string, unknown> });
  const logger: Logger = { trace: at(), debug: at(), info: at(), warn: at(), error: at(), child: () => logger };
  return { logger, lines };
}

const releaseMember = (thirdId: string, accountId: string): ReleaseChange => ({
  id: `members:release:${thirdId}`,
  entity: 'members',
  op: 'update',
  releases: true,
  thirdId,
  platformId: accountId,
  description: `release members "Ann Lee"`,
  reason: 'orgsync release',
  fields: {},
  dependsOn: [],
});

const releaseDepartment = (d: PlatformDepartment): ReleaseChange => ({
  id: `departments:release:${d.third_department_id}`,
  entity: 'departments',
  op: 'update',
  releases: true,
  thirdId: d.third_department_id,
  platformId: d.id,
  description: `release departments ${d.path}`,
  reason: 'orgsync release',
  fields: { metadata: {} },
  request: { method: 'PATCH', path: `/org/departments/${d.id}`, body: { metadata: {} } },
  dependsOn: [],
});

/** A synced world (department eng, member u1, both owned) with both recorded as missing for one run. */
async function ownedWorld(): Promise<{ w: SyncWorld; trust: TrustStateStore; account: string; eng: PlatformDepartment }> {
  const w = await SyncWorld.start();
  world = w;
  const summary = await w.run(org({ departments: [['eng', 'Engineering']], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng']] }));
  expect(summary.result).toBe('applied');
  const trust = new TrustStateStore(w.db, 'hr-sync');
  const at = new Date().toISOString();
  trust.commit({ at, snapshot: {}, missing: [{ entity: 'members', key: 'u1', firstMissingAt: at, runs: 1 }, { entity: 'departments', key: 'eng', firstMissingAt: at, runs: 1 }] });
  await w.resetCounts();
  const eng = w.mirror.all('departments').find((d) => d.third_department_id === 'eng')!;
  return { w, trust, account: w.ownership.ownedMembers().get('u1')!, eng };
}

describe('release through the applier', () => {
  it('a dry run writes nothing and logs RELEASE lines as "would apply"', async () => {
    const { w, trust, account, eng } = await ownedWorld();
    const { logger, lines } = capture();
    const deps = { client: w.client, mirror: w.mirror, ownership: w.ownership, logger, clock: systemClock, syncId: 'hr-sync', adopt: w.config.sync.adopt, trust, refresh: async () => undefined };
    const result = await applyChanges([releaseMember('u1', account), releaseDepartment(eng)], deps, { dryRun: true, concurrency: 2, maxFailures: 1 });
    expect(result.byStatus.applied).toBe(2);
    expect(await w.writeCalls()).toBe(0);
    expect(w.ownership.ownedMembers().get('u1')).toBe(account);
    expect([...trust.missing().keys()].sort()).toEqual(['departments:eng', 'members:u1']);
    expect(lines.map((l) => [l.msg, l.fields.status, l.fields.line])).toEqual([
      ['would apply', 'dry_run', 'RELEASE member u1'],
      ['would apply', 'dry_run', 'RELEASE department eng'],
    ]);
  });

  it('gives a member and a department up: ownership record deleted, managed_by removed, missing counts forgotten', async () => {
    const { w, trust, account, eng } = await ownedWorld();
    const { logger, lines } = capture();
    const deps = { client: w.client, mirror: w.mirror, ownership: w.ownership, logger, clock: systemClock, syncId: 'hr-sync', adopt: w.config.sync.adopt, trust, refresh: async () => undefined };
    const result = await applyChanges([releaseMember('u1', account), releaseDepartment(eng)], deps, { concurrency: 1, maxFailures: 1 });
    expect(result.byStatus.applied).toBe(2);
    // Counted as the updates they are: no sixth operation appears in the counts sync prints.
    expect(Object.keys(result.applied.members)).toEqual([...CHANGE_OPS]);
    expect(result.applied.members.update).toBe(1);
    expect(result.applied.departments.update).toBe(1);
    // One write: the department's PATCH; the member's release changes nothing on the platform.
    expect(await w.writeCalls()).toBe(1);
    expect(w.ownership.ownedMembers().has('u1')).toBe(false);
    expect(trust.missing().size).toBe(0);
    expect(((await w.api('GET', `/org/departments/${eng.id}`)) as PlatformDepartment).metadata).toEqual({});
    expect(w.mirror.snapshot().departments.byId.get(eng.id)?.metadata).toEqual({});
    expect(lines.map((l) => [l.msg, l.fields.op, l.fields.line])).toEqual([
      ['change applied', 'update', 'RELEASE member u1'],
      ['change applied', 'update', 'RELEASE department eng'],
    ]);
  });

  it('fails a release when the applier was given no trust state, and changes nothing', async () => {
    const { w, account } = await ownedWorld();
    const deps = { client: w.client, mirror: w.mirror, ownership: w.ownership, logger: capture().logger, clock: systemClock, syncId: 'hr-sync', adopt: w.config.sync.adopt, refresh: async () => undefined };
    const result = await applyChanges([releaseMember('u1', account)], deps, { concurrency: 1, maxFailures: 1 });
    expect(result.results).toEqual([expect.objectContaining({ status: 'failed', message: 'members:release:u1: a release needs the trust state (ApplierDeps.trust)' })]);
    expect(w.ownership.ownedMembers().get('u1')).toBe(account);
  });
});

describe('isReleaseChange and appliedChangeLine', () => {
  const update: Change = { id: 'departments:update:eng', entity: 'departments', op: 'update', thirdId: 'eng', description: 'rename department "Eng" to "Engineering"', reason: 'name differs', fields: { name: 'Engineering' }, dependsOn: [] };

  it('tells a release from an ordinary update', () => {
    expect(isReleaseChange(update)).toBe(false);
    expect(isReleaseChange(releaseMember('u1', 'acc-1'))).toBe(true);
    // The marker on any other op is no release.
    expect(isReleaseChange({ ...update, op: 'adopt', releases: true } as Change)).toBe(false);
  });

  it('says RELEASE for a release and what changeLine says for any other change', () => {
    expect(appliedChangeLine(update)).toBe(changeLine(update));
    expect(appliedChangeLine(update)).toBe('UPDATE department eng "Engineering"');
    expect(appliedChangeLine(releaseMember('u1', 'acc-1'))).toBe('RELEASE member u1 "Ann Lee"');
    expect(appliedChangeLine(releaseMember('u1', 'acc-1'), false)).toBe('RELEASE member u1');
  });
});
