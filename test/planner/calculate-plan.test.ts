import { describe, expect, it } from 'vitest';
import { calculatePlan, pendingContact, planToJson, renderPlanText } from '../../src/planner/index.js';
import { desired, dept, member, OPTS, position, ROOT, snapshot } from './fixtures.js';

const ids = (p: { changes: { id: string }[] }) => p.changes.map((c) => c.id);

describe('calculatePlan: creates', () => {
  it('imports a tree top-down, resolving parents to the creates of the same run', () => {
    const plan = calculatePlan(
      desired({
        departments: [
          { source_id: 'eng-be', name: 'Backend', parent_source_id: 'eng' },
          { source_id: 'eng', name: 'Engineering' },
        ],
        positions: [{ source_id: 'p1', name: 'Engineer' }],
        members: [{ source_id: 'u1', display_name: 'Ann', email: 'ann@x.test', department_source_id: 'eng-be', status: 'active' }],
      }),
      snapshot(),
      OPTS,
    );
    expect(ids(plan)).toEqual(['positions:create:p1', 'departments:create:eng', 'departments:create:eng-be', 'members:create:u1']);
    const be = plan.changes[2]!;
    expect(be.request?.body).toEqual({ name: 'Backend', parent_id: { ref: 'departments:create:eng' }, third_department_id: 'eng-be', metadata: { managed_by: 'hr' } });
    expect(be.dependsOn).toEqual(['departments:create:eng']);
    expect(plan.changes[1]!.request?.body?.parent_id).toBe('');
    expect(plan.changes[3]!.request?.body).toMatchObject({ department_id: { ref: 'departments:create:eng-be' }, third_user_id: 'u1', email: 'ann@x.test' });
    expect(plan.counts.departments.create).toBe(2);
  });

  it('creates a suspended member and then suspends it, in that order', () => {
    const plan = calculatePlan(desired({ members: [{ source_id: 'u1', display_name: 'Ann', status: 'suspended' }] }), snapshot(), OPTS);
    expect(ids(plan)).toEqual(['members:create:u1', 'members:update:u1']);
    expect(plan.changes[1]!.request).toEqual({ method: 'PATCH', path: '/org/members/{ref:members:create:u1}', body: { status: 'suspended' } });
  });

  it('hangs the tree under sync.root_department given by third id', () => {
    const hr = dept({ id: 'd-hr', name: 'HR root', third_department_id: 'ROOT-HR', metadata: {} });
    const plan = calculatePlan(desired({ departments: [{ source_id: 'a', name: 'A' }] }), snapshot({ departments: [ROOT, hr] }), { ...OPTS, rootDepartment: 'ROOT-HR' });
    expect(plan.changes[0]!.request?.body?.parent_id).toBe('d-hr');
  });
});

describe('calculatePlan: diff', () => {
  const eng = dept({ id: 'd1', name: 'Engineering', third_department_id: 'eng' });
  const ann = member({ account_id: 'a1', display_name: 'Ann', email: 'ann@x.test', third_user_id: 'u1', department_id: 'd1', title: 'Dev' });
  const owned = new Map([['u1', 'a1']]);

  it('plans nothing when both sides agree after normalisation', () => {
    const plan = calculatePlan(
      desired({
        departments: [{ source_id: 'eng', name: ' Engineering ' }],
        members: [{ source_id: 'u1', display_name: 'Ann', email: 'ANN@x.test', title: 'Dev', department_source_id: 'eng', status: 'active' }],
      }),
      snapshot({ departments: [ROOT, eng], members: [ann], ownedMembers: owned }),
      OPTS,
    );
    expect(plan.changes).toEqual([]);
    expect(plan.warnings).toEqual([]);
    expect(renderPlanText(plan)).toContain('No changes');
  });

  it('patches only the fields that differ', () => {
    const plan = calculatePlan(
      desired({
        departments: [{ source_id: 'eng', name: 'R&D' }],
        members: [{ source_id: 'u1', display_name: 'Ann', title: 'Lead', department_source_id: 'eng', status: 'active' }],
      }),
      snapshot({ departments: [ROOT, eng], members: [ann], ownedMembers: owned }),
      OPTS,
    );
    expect(plan.changes.map((c) => [c.id, c.request?.body])).toEqual([
      ['departments:update:eng', { name: 'R&D' }],
      ['members:update:u1', { title: 'Lead' }],
    ]);
    expect(plan.changes[0]!.description).toBe('rename department "/Acme/Engineering" to "R&D"');
  });

  it('reports an e-mail difference as unpatchable drift, never as a write', () => {
    const plan = calculatePlan(
      desired({ departments: [{ source_id: 'eng', name: 'Engineering' }], members: [{ source_id: 'u1', display_name: 'Ann', email: 'ann@new.test', title: 'Dev', department_source_id: 'eng', status: 'active' }] }),
      snapshot({ departments: [ROOT, eng], members: [ann], ownedMembers: owned }),
      OPTS,
    );
    expect(plan.changes).toEqual([]);
    expect(plan.warnings.map((w) => w.code)).toEqual(['unpatchable_drift']);
    expect(planToJson(plan).summary.unpatchable_drift).toBe(1);
    expect(renderPlanText(plan)).toContain('1 warning(s), 1 unpatchable drift.');
  });

  it('re-adds an owned member who left (re-hire) with a POST', () => {
    const plan = calculatePlan(
      desired({ members: [{ source_id: 'u1', display_name: 'Ann', email: 'ann@x.test', status: 'active' }] }),
      snapshot({ members: [{ ...ann, status: 'left', department_id: '' }], ownedMembers: owned }),
      OPTS,
    );
    expect(plan.changes.map((c) => [c.id, c.request?.method, c.reason])).toEqual([['members:create:u1', 'POST', 're-hire: the member left and is in the source again']]);
  });
});

describe('calculatePlan: ownership', () => {
  it('never patches or deletes records it does not own', () => {
    const hand = dept({ id: 'd9', name: 'Hand made', third_department_id: 'eng', metadata: {} });
    const other = dept({ id: 'd8', name: 'Other', third_department_id: 'x', metadata: { managed_by: 'someone-else' } });
    const bob = member({ account_id: 'b', display_name: 'Bob', third_user_id: 'u2' });
    const pos = position({ id: 'p9', name: 'Chief', metadata: {} });
    const plan = calculatePlan(
      desired({ departments: [{ source_id: 'eng', name: 'Engineering' }], members: [{ source_id: 'u2', display_name: 'Robert', status: 'active' }] }),
      snapshot({ departments: [ROOT, hand, other], members: [bob], positions: [pos] }),
      OPTS,
    );
    expect(plan.changes).toEqual([]);
    expect(plan.warnings.map((w) => [w.code, w.entity])).toEqual([
      ['not_owned_conflict', 'departments'],
      ['not_owned_conflict', 'members'],
    ]);
  });

  it('adopts explicitly: departments by name under the same parent, members by e-mail', () => {
    const hand = dept({ id: 'd9', name: 'Engineering', metadata: { color: 'red' } });
    const bob = member({ account_id: 'b', display_name: 'Bob', email: 'bob@x.test' });
    const plan = calculatePlan(
      desired({
        departments: [{ source_id: 'eng', name: 'Engineering' }],
        members: [{ source_id: 'u2', display_name: 'Bob', email: 'bob@x.test', department_source_id: 'eng', status: 'active' }],
      }),
      snapshot({ departments: [ROOT, hand], members: [bob] }),
      { ...OPTS, adopt: { departments: ['name'], members: ['email'], positions: [] } },
    );
    expect(plan.changes.map((c) => [c.id, c.adoptedBy, c.request?.body])).toEqual([
      ['departments:adopt:eng', 'name', { third_department_id: 'eng', metadata: { color: 'red', managed_by: 'hr' } }],
      ['members:adopt:u2', 'email', { third_user_id: 'u2', department_id: 'd9' }],
    ]);
  });

  it('takes over a record of its own crashed create (pending create recorded, not yet owned)', () => {
    const ann = member({ account_id: 'a1', display_name: 'Ann', third_user_id: 'u1' });
    const plan = calculatePlan(desired({ members: [{ source_id: 'u1', display_name: 'Ann', status: 'active' }] }), snapshot({ members: [ann], pendingCreates: { members: new Set(['u1']) } }), OPTS);
    expect(plan.changes.map((c) => [c.id, c.adoptedBy, c.request])).toEqual([['members:adopt:u1', 'crashed_create', undefined]]);
  });
});

describe('calculatePlan: crashed creates', () => {
  const ann = member({ account_id: 'a1', display_name: 'Ann', third_user_id: 'u1', email: 'ann@x.test' });
  it('removes its own crashed create once the source no longer has it, but not a look-alike with another contact', () => {
    const removeIt = calculatePlan(
      desired({ members: [{ source_id: 'u2', display_name: 'Bob', status: 'active' }] }),
      snapshot({ members: [ann], pendingCreates: { members: new Set(['u1']) }, pendingMemberContacts: new Map([['u1', pendingContact('ann@x.test', '')]]) }),
      OPTS,
    );
    expect(removeIt.changes.filter((c) => c.op === 'remove').map((c) => [c.id, c.platformId])).toEqual([['members:remove:u1', 'a1']]);
    const keepIt = calculatePlan(
      desired({ members: [{ source_id: 'u2', display_name: 'Bob', status: 'active' }] }),
      snapshot({ members: [ann], pendingCreates: { members: new Set(['u1']) }, pendingMemberContacts: new Map([['u1', pendingContact('someone@else.test', '')]]) }),
      OPTS,
    );
    expect(keepIt.changes.filter((c) => c.op === 'remove')).toEqual([]);
  });
});

describe('calculatePlan: removals', () => {
  const a = dept({ id: 'da', name: 'A', third_department_id: 'a' });
  const b = dept({ id: 'db', name: 'B', third_department_id: 'b' });
  const ann = member({ account_id: 'a1', display_name: 'Ann', third_user_id: 'u1', department_id: 'da' });
  const bob = member({ account_id: 'b1', display_name: 'Bob', third_user_id: 'u2', department_id: 'da' });
  const owned = new Map([['u1', 'a1'], ['u2', 'b1']]);

  it('deletes a department after its members moved out and the leavers were removed', () => {
    const plan = calculatePlan(
      desired({ departments: [{ source_id: 'b', name: 'B' }], members: [{ source_id: 'u1', display_name: 'Ann', department_source_id: 'b', status: 'active' }] }),
      snapshot({ departments: [ROOT, a, b], members: [ann, bob], ownedMembers: owned }),
      OPTS,
    );
    expect(ids(plan)).toEqual(['members:update:u1', 'members:remove:u2', 'departments:remove:a']);
    expect(plan.changes[2]!.dependsOn.sort()).toEqual(['members:remove:u2', 'members:update:u1']);
  });

  it('suspends instead of deleting with member_removal suspended, and takes the member out of a department being deleted', () => {
    const plan = calculatePlan(desired({ departments: [{ source_id: 'b', name: 'B' }], members: [] , provided: { departments: true, positions: true, members: false } }), snapshot({ departments: [ROOT, a, b], members: [ann], ownedMembers: new Map([['u1', 'a1']]) }), OPTS);
    // members not provided by any source: never removed, so the department holding one stays.
    expect(ids(plan)).toEqual([]);
    expect(plan.warnings.map((w) => w.code)).toEqual(['kept_not_empty']);
    const plan2 = calculatePlan(desired({ departments: [{ source_id: 'b', name: 'B' }], members: [{ source_id: 'u9', display_name: 'X', status: 'active' }] }), snapshot({ departments: [ROOT, a, b], members: [ann], ownedMembers: new Map([['u1', 'a1']]) }), { ...OPTS, memberRemoval: 'suspended' });
    expect(plan2.changes.filter((c) => c.entity !== 'members' || c.op !== 'create').map((c) => [c.id, c.request?.body])).toEqual([
      ['members:remove:u1', { status: 'suspended', department_id: '' }],
      ['departments:remove:a', undefined],
    ]);
  });

  it('keeps a department that still holds a member it does not own', () => {
    const hand = member({ account_id: 'h', display_name: 'Hand', department_id: 'da' });
    const plan = calculatePlan(desired({ departments: [{ source_id: 'b', name: 'B' }], members: [{ source_id: 'u1', display_name: 'Ann', department_source_id: 'b', status: 'active' }] }), snapshot({ departments: [ROOT, a, b], members: [ann, hand], ownedMembers: new Map([['u1', 'a1']]) }), OPTS);
    expect(ids(plan)).toEqual(['members:update:u1']);
    expect(plan.warnings[0]!.message).toContain('member "Hand" (not owned by this sync)');
  });

  it('deletes bottom-up and positions last', () => {
    const c = dept({ id: 'dc', name: 'C', parent_id: 'da', depth: 2, third_department_id: 'c', path: '/Acme/A/C' });
    const p = position({ id: 'p1', name: 'P', third_position_id: 'p' });
    const plan = calculatePlan(desired({ departments: [{ source_id: 'b', name: 'B' }], members: [{ source_id: 'u9', display_name: 'X', status: 'active' }], positions: [{ source_id: 'q', name: 'Q' }] }), snapshot({ departments: [ROOT, a, c, b], positions: [p] }), OPTS);
    expect(ids(plan)).toEqual(['positions:create:q', 'members:create:u9', 'departments:remove:c', 'departments:remove:a', 'positions:remove:p']);
    expect(plan.changes[3]!.dependsOn).toEqual(['departments:remove:c']);
  });
});

describe('calculatePlan: policies and guards', () => {
  const depts = Array.from({ length: 10 }, (_, i) => dept({ id: `d${i}`, name: `D${i}`, third_department_id: `t${i}` }));
  const keep = depts.slice(0, 7).map((d) => ({ source_id: d.third_department_id, name: d.name }));

  it('refuses a plan over the delete threshold unless --allow-deletes covers it', () => {
    const input = desired({ departments: [...keep, { source_id: 'new', name: 'New' }], members: [{ source_id: 'u', display_name: 'U', status: 'active' }] });
    const snap = snapshot({ departments: [ROOT, ...depts] });
    const refused = calculatePlan(input, snap, { ...OPTS, deleteThreshold: { max_count: 500, max_percent: 20 } });
    expect(refused.refusal?.guard).toBe('delete_threshold');
    expect(refused.refusal?.entities?.departments).toEqual({ removals: 3, owned: 10, maxCount: 500, maxPercent: 20 });
    expect(calculatePlan(input, snap, { ...OPTS, deleteThreshold: { max_count: 500, max_percent: 20 }, allowDeletes: 2 }).refusal?.guard).toBe('delete_threshold');
    expect(calculatePlan(input, snap, { ...OPTS, deleteThreshold: { max_count: 500, max_percent: 20 }, allowDeletes: 3 }).refusal).toBeUndefined();
    expect(calculatePlan(input, snap, { ...OPTS, deleteThreshold: { max_count: 2, max_percent: 100 } }).refusal?.guard).toBe('delete_threshold');
  });

  it('refuses an empty source when the sync owns records of that entity', () => {
    const plan = calculatePlan(desired({ departments: [] }), snapshot({ departments: [ROOT, ...depts] }), OPTS);
    expect(plan.refusal?.guard).toBe('empty_source');
  });

  it('upsert-only never removes; create-only only creates', () => {
    const input = desired({ departments: [{ source_id: 't0', name: 'Renamed' }, { source_id: 'new', name: 'New' }] });
    const snap = snapshot({ departments: [ROOT, ...depts.slice(0, 3)] });
    const upsert = calculatePlan(input, snap, { ...OPTS, policy: 'upsert-only' });
    expect(ids(upsert)).toEqual(['departments:create:new', 'departments:update:t0']);
    expect(upsert.withheld.map((w) => [w.change.id, w.why])).toEqual([
      ['departments:remove:t1', 'policy:upsert-only'],
      ['departments:remove:t2', 'policy:upsert-only'],
    ]);
    expect(ids(calculatePlan(input, snap, { ...OPTS, policy: 'create-only' }))).toEqual(['departments:create:new']);
  });

  it('create-only: the status a create of an earlier run still owes is part of that create; other drift stays withheld', () => {
    const sue = member({ account_id: 'a2', display_name: 'Sue', email: 'sue@x.test', third_user_id: 'u2', title: 'Old' });
    const input = desired({ members: [{ source_id: 'u2', display_name: 'Sue', email: 'sue@x.test', title: 'New', status: 'suspended' }] });
    const base = { members: [sue], ownedMembers: new Map([['u2', 'a2']]) };
    const owed = calculatePlan(input, snapshot({ ...base, owedCompletions: new Map([['u2', { status: 'suspended' }]]) }), { ...OPTS, policy: 'create-only' });
    expect(owed.changes.map((c) => [c.id, c.op, c.fields, c.completes])).toEqual([['members:complete:u2', 'update', { status: 'suspended' }, 'members:create:u2']]);
    expect(owed.withheld.map((w) => [w.change.id, w.change.fields, w.why])).toEqual([['members:update:u2', { title: 'New' }, 'policy:create-only']]);
    // Nothing owed: the status is an update like the title, and both are withheld.
    const plain = calculatePlan(input, snapshot(base), { ...OPTS, policy: 'create-only' });
    expect(plain.changes).toEqual([]);
    expect(plain.withheld.map((w) => [w.change.id, w.change.fields])).toEqual([['members:update:u2', { title: 'New', status: 'suspended' }]]);
    // Owed, but the source no longer asks for it (active now): nothing to complete.
    const moot = calculatePlan(desired({ members: [{ ...[...input.members][0]!, status: 'active' }] }), snapshot({ ...base, owedCompletions: new Map([['u2', { status: 'suspended' }]]) }), { ...OPTS, policy: 'create-only' });
    expect(moot.changes).toEqual([]);
    expect(moot.withheld.map((w) => w.change.id)).toEqual(['members:update:u2']);
  });
});

describe('plan renderings', () => {
  it('renders one JSON document of the documented shape', () => {
    const plan = calculatePlan(desired({ departments: [{ source_id: 'eng', name: 'Engineering' }] }), snapshot(), OPTS);
    const doc = planToJson(plan);
    expect(Object.keys(doc)).toEqual(['format_version', 'sync_id', 'policy', 'created_at', 'in_sync', 'summary', 'refusal', 'changes', 'warnings', 'withheld', 'quarantine', 'blocked', 'lifecycle']);
    expect(doc.created_at).toBe('2026-11-22T00:00:00.000Z');
    expect(doc.summary.departments.create).toBe(1);
    expect(doc.changes[0]).toMatchObject({ id: 'departments:create:eng', op: 'create', third_id: 'eng', request: { method: 'POST', path: '/org/departments' } });
    expect(renderPlanText(plan)).toMatch(/departments create \(1\)\n {2}\+ eng {2}create department "Engineering" under "\/Acme"/);
  });
});

describe('calculatePlan: quarantined records are never removed', () => {
  // Regression: a record quarantined in the source (say, an HR typo in an e-mail) is absent from the desired state;
  // it must not look like "gone from the source", or a typo would make a member leave.
  const eng = dept({ id: 'd1', name: 'Engineering', third_department_id: 'eng' });
  const pos = position({ id: 'p1', name: 'Engineer', third_position_id: 'pos1' });
  const ann = member({ account_id: 'a1', display_name: 'Ann', email: 'ann@x.test', third_user_id: 'u1', department_id: 'd1' });
  const base = snapshot({ departments: [ROOT, eng], positions: [pos], members: [ann], ownedMembers: new Map([['u1', 'a1']]) });
  const q = (entity: 'departments' | 'positions' | 'members', source_id: string) => ({ source: 'hr', entity, source_id, location: 'members.csv:7', reason: 'invalid_email', message: 'invalid e-mail' });

  it('keeps an owned member whose source record is quarantined, with a warning', () => {
    const plan = calculatePlan(desired({ departments: [{ source_id: 'eng', name: 'Engineering' }], positions: [{ source_id: 'pos1', name: 'Engineer' }], quarantine: [q('members', 'u1')] }), base, OPTS);
    expect(plan.changes).toEqual([]);
    expect(plan.warnings).toEqual([expect.objectContaining({ code: 'quarantined_kept', entity: 'members', thirdId: 'u1', platformId: 'a1' })]);
  });

  it('keeps a quarantined department and position, and still removes what is really gone', () => {
    const plan = calculatePlan(desired({ quarantine: [q('departments', 'eng'), q('positions', 'pos1')] }), base, OPTS);
    expect(ids(plan)).toEqual(['members:remove:u1']);
    expect(plan.warnings.map((w) => `${w.code}:${w.entity}:${w.thirdId}`).sort()).toEqual(['quarantined_kept:departments:eng', 'quarantined_kept:positions:pos1']);
  });

  it('without the quarantine entry the same member is removed (the test can fail)', () => {
    const plan = calculatePlan(desired({ departments: [{ source_id: 'eng', name: 'Engineering' }], positions: [{ source_id: 'pos1', name: 'Engineer' }] }), base, OPTS);
    expect(ids(plan)).toEqual(['members:remove:u1']);
  });
});

describe('renderPlanText', () => {
  it('shows only the new value of a field that had none (the suspend after a create)', () => {
    const plan = calculatePlan(desired({ members: [{ source_id: 'u1', display_name: 'Ann', email: 'ann@x.test', status: 'suspended' }] }), snapshot(), OPTS);
    const text = renderPlanText(plan);
    expect(text).toContain('[status: "suspended"]');
    expect(text).not.toContain('undefined');
  });
});
