/**
 * The applier's 409/403 handling against the emulator: create collisions (own record taken, foreign one reported),
 * member_exists adoption, moves and deletes rejected because the platform changed between plan and apply (re-plan),
 * tenant.admin members, and the dry-run seam.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { applyChanges } from '../../src/applier/index.js';
import type { Change, PlatformDepartment, PlatformMember } from '../../src/domain/index.js';
import type { OrgPlatformPort } from '../../src/platform/port.js';
import { silentLogger } from '../../src/shared/logger.js';
import { systemClock } from '../../src/shared/clock.js';
import { ADA, expectedView, org, SyncWorld } from '../e2e/harness.js';

let world: SyncWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** The apply options the config's defaults give (platform.concurrency, sync.max_failures). */
const APPLY = { concurrency: 8, maxFailures: 100 };

function deps(w: SyncWorld) {
  return {
    client: w.client,
    mirror: w.mirror,
    ownership: w.ownership,
    logger: silentLogger,
    clock: systemClock,
    syncId: w.config.sync.id,
    adopt: w.config.sync.adopt,
    refresh: async () => {
      await w.plan(org({}));
    },
  };
}

const createDept = (third: string, name: string, parent: Change['fields'][string] = ''): Change => {
  const fields = { name, parent_id: parent, third_department_id: third, metadata: { managed_by: 'hr-sync' } };
  return { id: `departments:create:${third}`, entity: 'departments', op: 'create', thirdId: third, description: `create ${name}`, reason: 'test', fields, request: { method: 'POST', path: '/org/departments', body: fields }, dependsOn: typeof parent === 'object' && parent !== null && 'ref' in parent ? [String(parent.ref)] : [] };
};

/** A port that runs `before` once, just before the first call of `method`. */
function interceptOnce(port: OrgPlatformPort, method: keyof OrgPlatformPort, before: () => Promise<void>): OrgPlatformPort {
  let done = false;
  return new Proxy(port, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== method || typeof v !== 'function') return typeof v === 'function' ? v.bind(target) : v;
      return async (...args: unknown[]) => {
        if (!done) {
          done = true;
          await before();
        }
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

describe('create collisions', () => {
  it('takes over its own record (a crashed create) and its dependants use the taken id', async () => {
    world = await SyncWorld.start();
    const w = world;
    const own = await w.api('POST', '/org/departments', { name: 'Old name', third_department_id: 'eng', metadata: { managed_by: 'hr-sync' } });
    const res = await applyChanges([createDept('eng', 'Engineering'), createDept('eng-be', 'Backend', { ref: 'departments:create:eng' })], deps(w), APPLY);
    expect(res.results.map((r) => [r.change.id, r.status])).toEqual([
      ['departments:create:eng', 'adopted'],
      ['departments:create:eng-be', 'applied'],
    ]);
    const depts = await w.list<PlatformDepartment>('departments');
    expect(depts.find((d) => d.third_department_id === 'eng')).toMatchObject({ id: own.id, name: 'Engineering' });
    expect(depts.find((d) => d.third_department_id === 'eng-be')?.parent_id).toBe(own.id);
    expect(w.ownership.adoptions().map((a) => [a.entity, a.thirdId, a.matchedBy])).toEqual([['departments', 'eng', 'crashed_create']]);
  });

  it('reports a collision with a record it does not own, leaves it alone and skips what depends on it', async () => {
    world = await SyncWorld.start();
    const w = world;
    const foreign = await w.api('POST', '/org/departments', { name: 'Theirs', third_department_id: 'eng', metadata: { managed_by: 'other' } });
    const res = await applyChanges([createDept('eng', 'Engineering'), createDept('eng-be', 'Backend', { ref: 'departments:create:eng' }), createDept('ops', 'Ops')], deps(w), APPLY);
    expect(res.results.map((r) => [r.change.id, r.status])).toEqual([
      ['departments:create:eng', 'conflict'],
      ['departments:create:eng-be', 'skipped'],
      ['departments:create:ops', 'applied'],
    ]);
    expect(await w.api('GET', `/org/departments/${foreign.id}`)).toEqual(foreign);
  });

  it("keep: 'unsuccessful' keeps only what did not succeed; every result still reaches onResult and the counts", async () => {
    world = await SyncWorld.start();
    const w = world;
    await w.api('POST', '/org/departments', { name: 'Theirs', third_department_id: 'eng', metadata: { managed_by: 'other' } });
    const seen: string[] = [];
    const res = await applyChanges([createDept('ops', 'Ops'), createDept('eng', 'Engineering'), createDept('eng-be', 'Backend', { ref: 'departments:create:eng' }), createDept('hr', 'HR')], deps(w), {
      ...APPLY,
      keep: 'unsuccessful',
      onResult: (r) => seen.push(`${r.change.id} ${r.status}`),
    });
    expect(res.results.map((r) => [r.change.id, r.status])).toEqual([
      ['departments:create:eng', 'conflict'],
      ['departments:create:eng-be', 'skipped'],
    ]);
    expect(seen.sort()).toEqual(['departments:create:eng conflict', 'departments:create:eng-be skipped', 'departments:create:hr applied', 'departments:create:ops applied']);
    expect(res.byStatus).toMatchObject({ applied: 2, conflict: 1, skipped: 1 });
    expect(res.applied.departments.create).toBe(2);
  });

  it("keep: 'unsuccessful' gives the changes left unstarted by a stop as positions, not results; keep 'all' as results", async () => {
    world = await SyncWorld.start();
    const w = world;
    const member = (third: string): Change => {
      const body = { display_name: `Member ${third}`, third_user_id: third, email: `${third}@acme.test` };
      return { id: `members:create:${third}`, entity: 'members', op: 'create', thirdId: third, description: `create ${third}`, reason: 'test', fields: body, request: { method: 'POST', path: '/org/members', body }, dependsOn: [] };
    };
    const changes = [createDept('ops', 'Ops'), createDept('eng', 'Engineering'), createDept('eng-be', 'Backend', { ref: 'departments:create:eng' }), member('u1'), member('u2')];
    const seen: string[] = [];
    const stopped = await applyChanges(changes, deps(w), { ...APPLY, keep: 'unsuccessful', signal: AbortSignal.abort(), onResult: (r) => seen.push(`${r.change.id} ${r.status}`) });
    expect(stopped.results).toEqual([]);
    expect(Array.from(stopped.notStarted!.positions)).toEqual([0, 1, 2, 3, 4]);
    expect(stopped.notStarted!.message).toBe('not started: the run was asked to stop');
    expect(stopped.byStatus.not_started).toBe(5);
    expect(stopped.stopped).toBe(true);
    expect(seen).toEqual(changes.map((c) => `${c.id} not_started`));
    // The member creates noted as pending before the apply were certainly not sent: their notes are gone.
    expect(w.ownership.pendingCreates().members).toEqual(new Set());
    const all = await applyChanges(changes, deps(w), { ...APPLY, signal: AbortSignal.abort() });
    expect(all.notStarted).toBeUndefined();
    expect(all.results.map((r) => [r.change.id, r.status, r.message])).toEqual(changes.map((c) => [c.id, 'not_started', 'not started: the run was asked to stop']));
    expect(await w.api('GET', '/org/departments?limit=200')).toMatchObject({ items: expect.not.arrayContaining([expect.objectContaining({ name: 'Ops' })]) });
  });

  it('member_exists: adopts by e-mail when configured, otherwise reports', async () => {
    world = await SyncWorld.start('id: hr-sync\n  adopt: { members: [email] }');
    const w = world;
    const hand = await w.api('POST', '/org/members', { display_name: 'Ann', email: 'ann@acme.test' });
    const body = { display_name: 'Ann Lee', email: 'ann@acme.test', third_user_id: 'u1' };
    const c: Change = { id: 'members:create:u1', entity: 'members', op: 'create', thirdId: 'u1', description: 'create Ann', reason: 'test', fields: body, request: { method: 'POST', path: '/org/members', body }, dependsOn: [] };
    const res = await applyChanges([c], deps(w), APPLY);
    expect(res.results[0]).toMatchObject({ status: 'adopted', platformId: hand.account_id });
    expect(await w.api('GET', `/org/members/${hand.account_id}`)).toMatchObject({ display_name: 'Ann Lee', third_user_id: 'u1' });
    expect(w.ownership.ownedMembers()).toEqual(new Map([['u1', hand.account_id]]));
    const other = { ...body, email: 'ada@acme.test', third_user_id: 'u2' };
    const c2: Change = { ...c, id: 'members:create:u2', thirdId: 'u2', fields: other, request: { method: 'POST', path: '/org/members', body: other } };
    const w2 = await SyncWorld.start('id: hr-sync');
    try {
      const r2 = await applyChanges([c2], deps(w2), APPLY);
      expect(r2.results[0]!.status).toBe('conflict');
      expect(r2.results[0]!.message).toMatch(/already in the tenant and not owned/);
    } finally {
      await w2.close();
    }
  });
});

describe('the platform changes between plan and apply', () => {
  it('a move rejected as a cycle is re-planned and converges', async () => {
    world = await SyncWorld.start();
    const w = world;
    await w.run(org({ departments: [['x', 'X'], ['y', 'Y']] }));
    const depts = await w.list<PlatformDepartment>('departments');
    const x = depts.find((d) => d.third_department_id === 'x')!;
    const y = depts.find((d) => d.third_department_id === 'y')!;
    // Someone moves Y under X just before orgsync moves X under Y.
    w.port = interceptOnce(w.client, 'patchDepartment', async () => {
      await w.api('PATCH', `/org/departments/${y.id}`, { parent_id: x.id });
    });
    const desired = org({ departments: [['y', 'Y'], ['x', 'X', 'y']] });
    const s = await w.run(desired);
    expect(s.replanRounds).toBe(1);
    expect(s.exitCode).toBe(0);
    expect(await w.view()).toEqual({ ...expectedView(desired), members: ADA });
    w.port = undefined;
    expect((await w.plan(desired)).plan.changes).toEqual([]);
  });

  it('a delete rejected for members is re-planned: the department is kept when what is in it is not ours', async () => {
    world = await SyncWorld.start();
    const w = world;
    await w.run(org({ departments: [['a', 'A'], ['b', 'B']], members: [['u1', 'Ann', 'ann@acme.test', 'a']] }));
    const a = (await w.list<PlatformDepartment>('departments')).find((d) => d.third_department_id === 'a')!;
    w.port = interceptOnce(w.client, 'deleteDepartment', async () => {
      await w.api('POST', '/org/members', { display_name: 'Hank', email: 'hank@acme.test', department_id: a.id });
    });
    const desired = org({ departments: [['b', 'B']], members: [['u1', 'Ann', 'ann@acme.test', 'b']] });
    const s = await w.run(desired);
    expect(s.replanRounds).toBe(1);
    expect(s.exitCode).toBe(0);
    expect(s.notConverged).toEqual([]);
    const again = await w.plan(desired);
    expect(again.plan.changes).toEqual([]);
    expect(again.plan.warnings.map((x) => x.code)).toEqual(['kept_not_empty']);
  });
});

describe('members that cannot be removed', () => {
  it('skips, warns and counts a tenant.admin member (403 member_is_admin)', async () => {
    world = await SyncWorld.start('id: hr-sync\n  adopt: { members: [email] }\n  delete_threshold: { max_count: 500, max_percent: 100 }');
    const w = world;
    await w.run(org({ members: [['ada', 'Ada Admin', 'ada@acme.test'], ['u1', 'Ann', 'ann@acme.test']] }));
    const s = await w.run(org({ members: [['u1', 'Ann', 'ann@acme.test']] }));
    expect(s.skippedAdmin).toBe(1);
    expect(s.exitCode).toBe(0);
    expect((await w.list<PlatformMember>('members')).find((m) => m.email === 'ada@acme.test')?.status).toBe('active');
  });
});

describe('the dry-run seam', () => {
  it('describes every change and writes nothing anywhere', async () => {
    world = await SyncWorld.start();
    const w = world;
    const before = w.mirror.counts();
    await w.resetCounts();
    const res = await applyChanges([createDept('eng', 'Engineering'), createDept('eng-be', 'Backend', { ref: 'departments:create:eng' })], deps(w), { ...APPLY, dryRun: true });
    expect(res.byStatus.applied).toBe(2);
    expect(await w.writeCalls()).toBe(0);
    expect(w.mirror.counts()).toEqual(before);
    expect(w.ownership.adoptions()).toEqual([]);
  });
});

describe('a large dry run', () => {
  it('lets the event loop turn while it describes thousands of changes (timers, signals and collections run)', async () => {
    world = await SyncWorld.start();
    const w = world;
    const changes: Change[] = [];
    for (let i = 0; i < 2500; i++) changes.push(createDept(`d${i}`, `Dept ${i}`));
    let finished = 0;
    const seenByTimer: number[] = [];
    const tick = (): void => {
      seenByTimer.push(finished);
      if (finished < changes.length) setImmediate(tick);
    };
    setImmediate(tick);
    const res = await applyChanges(changes, deps(w), { ...APPLY, dryRun: true, onResult: () => (finished += 1) });
    expect(res.byStatus.applied).toBe(2500);
    // Without a turn of the loop every 1,000 steps the timer would first run after the last change.
    expect(seenByTimer.some((n) => n > 0 && n < 2500)).toBe(true);
    expect(await w.writeCalls()).toBe(0);
  });
});
