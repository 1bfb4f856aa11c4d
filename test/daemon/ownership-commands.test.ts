/**
 * `orgsync adopt` / `orgsync release` carried out as Changes by the applier (src/daemon/ownership-commands.ts, issue
 * 30 point 5): the Changes built from the actions, the error a failed apply ends with, the apply itself against the
 * emulator (real and dry), and what the command records (run history, record history, its log line) or, in a dry
 * run, does not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ApplyResult, ChangeResult } from '../../src/applier/index.js';
import { isReleaseChange } from '../../src/applier/index.js';
import type { Change, PlatformDepartment, PlatformMember } from '../../src/domain/index.js';
import {
  applyOwnershipChanges,
  DRY_RUN_OWNERSHIP_RECORDS,
  ownershipChanges,
  ownershipFailure,
  ownershipRunner,
  planAdoption,
  realOwnershipRecords,
  refreshForOwnership,
  runOwnershipCommand,
  type OwnershipAction,
  type OwnershipCommandDeps,
  type OwnershipRecords,
} from '../../src/daemon/ownership-commands.js';
import type { MirrorSnapshot } from '../../src/mirror/mirror.js';
import { RecordHistory } from '../../src/mirror/record-history.js';
import { RunHistory } from '../../src/mirror/runs.js';
import { TrustStateStore } from '../../src/mirror/trust-state.js';
import { systemClock } from '../../src/shared/clock.js';
import { isOrgsyncError } from '../../src/shared/errors.js';
import type { Logger } from '../../src/shared/logger.js';
import { desiredOf, org, SyncWorld } from '../e2e/harness.js';

let world: SyncWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

interface Line {
  msg: string | undefined;
  fields: Record<string, unknown>;
}

/** A logger that keeps every line's message and fields. */
function capture(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at = () => (fields: object, msg?: string) => lines.push({ msg, fields: fields as Record<string, unknown> });
  const logger: Logger = { trace: at(), debug: at(), info: at(), warn: at(), error: at(), child: () => logger };
  return { logger, lines };
}

const DESIRED = desiredOf(org({ departments: [['eng', 'Engineering'], ['sales', 'Sales']], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng'], ['u4', 'Hank Hand', 'hank@acme.test', 'eng']] }));

/**
 * A world where the sync owns eng and u1, and a department `sales` (metadata cost_center 42) and a member Hank were
 * made by hand with the ids the sources use: both unowned, both adoptable.
 */
async function handMadeWorld(): Promise<{ w: SyncWorld; deps: OwnershipCommandDeps; lines: Line[]; sales: PlatformDepartment; hank: PlatformMember }> {
  const w = await SyncWorld.start();
  world = w;
  expect((await w.run(org({ departments: [['eng', 'Engineering']], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng']] }))).result).toBe('applied');
  const sales = (await w.api('POST', '/org/departments', { name: 'Sales', third_department_id: 'sales', metadata: { cost_center: '42' } })) as PlatformDepartment;
  const hank = (await w.api('POST', '/org/members', { display_name: 'Hank Hand', email: 'hank@acme.test', third_user_id: 'u4' })) as PlatformMember;
  const { logger, lines } = capture();
  const deps: OwnershipCommandDeps = { config: w.config, client: w.client, mirror: w.mirror, ownership: w.ownership, logger, clock: systemClock, trust: new TrustStateStore(w.db, 'hr-sync') };
  await refreshForOwnership(deps);
  await w.resetCounts();
  // What the tests look at is what the command logs, not the refresh's lines.
  lines.length = 0;
  return { w, deps, lines, sales, hank };
}

/** The adoptions of Hank (by e-mail) and of sales (by third id), as `orgsync adopt` computes them. */
function adoptions(deps: OwnershipCommandDeps): OwnershipAction[] {
  return [...planAdoption(deps, DESIRED, 'email', 'members'), ...planAdoption(deps, DESIRED, 'third-id', 'departments')];
}

describe('ownershipChanges', () => {
  const dept = { id: 'd-7', metadata: { cost_center: '42', managed_by: 'hr-sync' } } as unknown as PlatformDepartment;
  const snapshot = { departments: { byId: new Map([['d-7', dept]]) }, positions: { byId: new Map() }, members: { byId: new Map() } } as unknown as MirrorSnapshot;
  const action = (kind: OwnershipAction['kind'], entity: OwnershipAction['entity'], thirdId: string, platformId: string): OwnershipAction => ({ kind, entity, thirdId, platformId, label: `"X"`, detail: 'd', ...(kind === 'adopt' ? { matchedBy: 'email' as const } : {}) });

  it('a member adoption is an adopt without a request; a member release a release without one', () => {
    const [adopt, release] = ownershipChanges([action('adopt', 'members', 'u4', 'acc-4'), action('release', 'members', 'u1', 'acc-1')], snapshot, 'hr-sync');
    expect(adopt).toEqual({ id: 'members:adopt:u4', entity: 'members', op: 'adopt', thirdId: 'u4', platformId: 'acc-4', description: 'adopt members "X"', reason: 'orgsync adopt', fields: {}, dependsOn: [], adoptedBy: 'email' });
    expect(release).toMatchObject({ id: 'members:release:u1', op: 'update', releases: true, thirdId: 'u1', platformId: 'acc-1', fields: {} });
    expect(release!.request).toBeUndefined();
    expect(isReleaseChange(release!)).toBe(true);
    expect(isReleaseChange(adopt!)).toBe(false);
  });

  it('a department adoption PATCHes metadata with managed_by, a release without it, other keys kept', () => {
    const [adopt, release] = ownershipChanges([action('adopt', 'departments', 'sales', 'd-7'), action('release', 'departments', '', 'd-7')], snapshot, 'other-sync');
    expect(adopt!.request).toEqual({ method: 'PATCH', path: '/org/departments/d-7', body: { metadata: { cost_center: '42', managed_by: 'other-sync' } } });
    expect(adopt!.adoptedBy).toBe('email');
    // No third id: the change is named by the platform id.
    expect(release).toMatchObject({ id: 'departments:release:d-7', op: 'update', releases: true, request: { method: 'PATCH', path: '/org/departments/d-7', body: { metadata: { cost_center: '42' } } } });
    // The mirror's record itself is not changed.
    expect(dept.metadata).toEqual({ cost_center: '42', managed_by: 'hr-sync' });
  });

  it('ids stay unique when two actions share an entity, kind and key', () => {
    const changes = ownershipChanges([action('adopt', 'positions', 'p', 'p-1'), action('adopt', 'positions', 'p', 'p-2'), action('adopt', 'positions', 'p', 'p-3')], snapshot, 'hr-sync');
    expect(changes.map((c) => c.id)).toEqual(['positions:adopt:p', 'positions:adopt:p:2', 'positions:adopt:p:3']);
  });
});

describe('ownershipFailure', () => {
  const a: OwnershipAction = { kind: 'adopt', entity: 'departments', thirdId: 'sales', platformId: 'd-7', label: '/Acme/Sales', detail: 'd' };
  const change = { id: 'departments:adopt:sales' } as Change;
  const result = (results: ChangeResult[], stopReason?: ApplyResult['stopReason']): ApplyResult => ({ results, applied: {} as ApplyResult['applied'], byStatus: {} as ApplyResult['byStatus'], stopped: stopReason !== undefined, ...(stopReason ? { stopReason } : {}) });
  const actionOf = new Map([[change, a]]);

  it('is undefined when every change succeeded', () => {
    expect(ownershipFailure(result([{ change, status: 'adopted' }]), actionOf)).toBeUndefined();
  });

  it('names the first change that did not succeed by its action (PLATFORM_ERROR)', () => {
    const err = ownershipFailure(result([{ change, status: 'deferred', message: 'the record is gone from the platform' }]), actionOf);
    expect(err?.code).toBe('PLATFORM_ERROR');
    expect(err?.message).toBe('adopt departments sales: the record is gone from the platform');
  });

  it('a refused key is CREDENTIAL_REJECTED; an unrecordable write STATE_ERROR; a lost lease STATE_LOCKED', () => {
    expect(ownershipFailure(result([{ change, status: 'failed', message: 'the platform rejected the credential' }], { kind: 'credential_refused', message: 'the platform rejected the credential' }), actionOf)?.code).toBe('CREDENTIAL_REJECTED');
    const unrecordable = ownershipFailure(result([], { kind: 'state_unrecordable', message: 'could not record a write in state DB /x.db: disk full' }), actionOf);
    expect([unrecordable?.code, unrecordable?.message]).toEqual(['STATE_ERROR', 'could not record a write in state DB /x.db: disk full']);
    expect(ownershipFailure(result([{ change, status: 'not_started', message: 'not started' }], { kind: 'lease_lost', message: 'the lease was taken' }), actionOf)?.code).toBe('STATE_LOCKED');
  });
});

describe('applyOwnershipChanges', () => {
  it('adopts through the applier: the member recorded as owned (matched by e-mail), the department PATCHed', async () => {
    const { w, deps, lines, sales, hank } = await handMadeWorld();
    const done: string[] = [];
    await applyOwnershipChanges(deps, adoptions(deps), false, (a) => done.push(`${a.entity} ${a.thirdId}`));
    expect(done.sort()).toEqual(['departments sales', 'members u4']);
    expect(w.ownership.ownedMembers().get('u4')).toBe(hank.account_id);
    expect(w.ownership.adoptions().map((r) => [r.entity, r.thirdId, r.matchedBy, r.detail])).toEqual([
      ['members', 'u4', 'email', 'orgsync adopt'],
      ['departments', 'sales', 'third_id', 'orgsync adopt'],
    ]);
    expect(((await w.api('GET', `/org/departments/${sales.id}`)) as PlatformDepartment).metadata).toEqual({ cost_center: '42', managed_by: 'hr-sync' });
    expect(await w.writeCalls()).toBe(1);
    expect(lines.filter((l) => l.msg === 'change applied').map((l) => l.fields.line)).toEqual(['ADOPT member u4', 'ADOPT department sales']);
  });

  it('a dry run goes through the same applier and writes nothing: no PATCH, no ownership, no line saying applied', async () => {
    const { w, deps, lines } = await handMadeWorld();
    const done: string[] = [];
    await applyOwnershipChanges(deps, adoptions(deps), true, (a) => done.push(a.thirdId));
    expect(done.sort()).toEqual(['sales', 'u4']);
    expect(await w.writeCalls()).toBe(0);
    expect(w.ownership.ownedMembers().has('u4')).toBe(false);
    expect(w.ownership.adoptions()).toEqual([]);
    expect(lines.map((l) => [l.msg, l.fields.status])).toEqual([
      ['would apply', 'dry_run'],
      ['would apply', 'dry_run'],
    ]);
  });

  it('a department gone from the platform since the mirror was read fails the command with PLATFORM_ERROR', async () => {
    const { w, deps, sales } = await handMadeWorld();
    const actions = planAdoption(deps, DESIRED, 'third-id', 'departments');
    await w.api('DELETE', `/org/departments/${sales.id}`);
    const err: unknown = await applyOwnershipChanges(deps, actions, false).catch((e: unknown) => e);
    expect(isOrgsyncError(err) && [err.code, err.message]).toEqual(['PLATFORM_ERROR', 'adopt departments sales: the record is gone from the platform']);
  });
});

describe('runOwnershipCommand and what it records', () => {
  it('records the command in the run history and each record in the record history, and logs each record adopted', async () => {
    const { w, deps, lines, hank } = await handMadeWorld();
    const history = new RunHistory(w.db);
    await runOwnershipCommand(deps, adoptions(deps), false, realOwnershipRecords({ ...deps, history, runId: 'run-adopt-1' }, 'adopt'));
    const row = history.get('run-adopt-1');
    expect([row?.trigger, row?.result, row?.exitCode]).toEqual(['adopt', 'success', 0]);
    expect(row?.summary).toEqual({ result: 'adopted', adopted: { members: 1, departments: 1, positions: 0 }, writes: 2, planned: 2 });
    const entries = new RecordHistory(w.db).entries({ sourceIds: ['u4', 'sales'], platformIds: [] });
    expect(entries.map((e) => [e.entity, e.op, e.trigger, e.result, e.runId]).sort()).toEqual([
      ['departments', 'adopt', 'adopt', 'adopted', 'run-adopt-1'],
      ['members', 'adopt', 'adopt', 'adopted', 'run-adopt-1'],
    ]);
    expect(lines.filter((l) => l.msg === 'record adopted').map((l) => l.fields)).toContainEqual({ change: 'adopt', entity: 'members', third_id: 'u4', platform_id: hank.account_id });
  });

  it('a failure is recorded as failed with what succeeded before it, then rethrown', async () => {
    const { w, deps, sales } = await handMadeWorld();
    const history = new RunHistory(w.db);
    const actions = planAdoption(deps, DESIRED, 'third-id', 'departments');
    await w.api('DELETE', `/org/departments/${sales.id}`);
    await expect(runOwnershipCommand(deps, actions, false, realOwnershipRecords({ ...deps, history, runId: 'run-adopt-2' }, 'adopt'))).rejects.toThrow('adopt departments sales: the record is gone from the platform');
    const row = history.get('run-adopt-2');
    expect([row?.result, row?.exitCode, row?.error]).toEqual(['failed', 1, 'adopt departments sales: the record is gone from the platform']);
    expect(row?.summary).toMatchObject({ result: 'failed', writes: 0, planned: 1 });
  });

  it('hands the records what happened: start, each success, the end', async () => {
    const { deps } = await handMadeWorld();
    const seen: string[] = [];
    const records: OwnershipRecords = { start: () => seen.push('start'), done: (a) => seen.push(`done ${a.thirdId}`), finish: (done, planned, error) => seen.push(`finish ${done.length}/${planned} ${error ?? 'ok'}`) };
    await runOwnershipCommand(deps, planAdoption(deps, DESIRED, 'email', 'members'), true, records);
    expect(seen).toEqual(['start', 'done u4', 'finish 1/1 ok']);
  });
});

describe('ownershipRunner', () => {
  it('a dry run records nothing: no run-history row, no record history, no "record adopted", nothing written', async () => {
    const { w, deps, lines } = await handMadeWorld();
    const history = new RunHistory(w.db);
    const before = history.recent(50).length;
    await ownershipRunner({ ...deps, history, runId: 'run-dry' }, true)('adopt', adoptions(deps));
    expect(history.get('run-dry')).toBeUndefined();
    expect(history.recent(50)).toHaveLength(before);
    expect(new RecordHistory(w.db).entries({ sourceIds: ['u4', 'sales'], platformIds: [] })).toEqual([]);
    expect(await w.writeCalls()).toBe(0);
    expect(lines.map((l) => l.msg)).toEqual(['would apply', 'would apply']);
    expect(DRY_RUN_OWNERSHIP_RECORDS.finish([], 0, undefined)).toBeUndefined();
  });

  it('a real run releases through the applier and records the release under its own trigger', async () => {
    const { w, deps, lines } = await handMadeWorld();
    const history = new RunHistory(w.db);
    const eng = w.mirror.all('departments').find((d) => d.third_department_id === 'eng')!;
    const u1 = w.ownership.ownedMembers().get('u1')!;
    const releases: OwnershipAction[] = [
      { kind: 'release', entity: 'members', thirdId: 'u1', platformId: u1, label: '"Ann Lee"', detail: 'the ownership record is deleted' },
      { kind: 'release', entity: 'departments', thirdId: 'eng', platformId: eng.id, label: '/Acme/Engineering', detail: 'metadata.managed_by is removed' },
    ];
    await ownershipRunner({ ...deps, history, runId: 'run-release' }, false)('release', releases);
    expect(w.ownership.ownedMembers().has('u1')).toBe(false);
    expect(((await w.api('GET', `/org/departments/${eng.id}`)) as PlatformDepartment).metadata).toEqual({});
    expect(history.get('run-release')?.summary).toEqual({ result: 'released', released: { members: 1, departments: 1, positions: 0 }, writes: 2, planned: 2 });
    expect(new RecordHistory(w.db).entries({ sourceIds: ['eng'], platformIds: [] })[0]).toMatchObject({ op: 'release', trigger: 'release', result: 'released', fields: { 'metadata.managed_by': { old: 'hr-sync', new: null } } });
    expect(lines.filter((l) => l.msg === 'change applied').map((l) => l.fields.line)).toEqual(['RELEASE member u1', 'RELEASE department eng']);
    expect(lines.filter((l) => l.msg === 'record released')).toHaveLength(2);
  });
});
