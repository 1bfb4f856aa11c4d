/** The member decision table, one row handler at a time: a tiny index value, one call, the result it wrote. */
import { describe, expect, it } from 'vitest';
import type { DesiredMember, PlatformMember } from '../../src/domain/index.js';
import type { DiffContext } from '../../src/planner/context.js';
import { pendingContact } from '../../src/planner/index.js';
import { memberKey } from '../../src/planner/members/member-index.js';
import { listMemberTable } from '../../src/planner/members/list-table.js';
import { ABSENT_ROWS, classifyLeftover, classifyOwnedAbsent } from '../../src/planner/members/absent-rows.js';
import { classifyPresent, PRESENT_ROWS } from '../../src/planner/members/present-rows.js';
import { createMember } from '../../src/planner/members/create-member.js';
import { removeMember } from '../../src/planner/members/remove-member.js';
import { completeEarlierCreate, updateMember } from '../../src/planner/members/update-member.js';
import { type MemberEnv, type MemberResult, newMemberResult } from '../../src/planner/members/types.js';
import { member, OPTS } from './fixtures.js';

interface Setup {
  desired?: DesiredMember[];
  live?: PlatformMember[];
  owned?: [string, string][];
  ctx?: Partial<DiffContext>;
  removing?: string[];
  ownedDepts?: string[];
  removalMode?: 'left' | 'suspended';
  adoptBy?: string[];
  provided?: boolean;
}

function setup(s: Setup = {}): { env: MemberEnv; out: MemberResult } {
  const ctx: DiffContext = { syncId: 'hr', opts: OPTS, warnings: [], pending: {}, ...s.ctx };
  const index = listMemberTable(s.desired ?? [], s.live ?? [], new Map(s.owned ?? [])).lookups();
  const env: MemberEnv = {
    ctx,
    index,
    input: {
      resolveDepartment: (sid) => ({ eng: 'd-eng', sales: 'd-sales', new: '@departments:create:new' })[sid],
      removing: new Set(s.removing ?? []),
      tenantRootId: 'root',
      isOwnedDepartment: (id) => (s.ownedDepts ?? []).includes(id),
      departmentLabel: (t) => (t === '' ? '/Acme' : `/Acme/${t}`),
    },
    removalMode: s.removalMode ?? 'left',
    adoptBy: s.adoptBy ?? [],
    provided: s.provided ?? true,
  };
  return { env, out: newMemberResult(ctx.warnings) };
}

const ann: DesiredMember = { source_id: 'u1', display_name: 'Ann', email: 'ann@x.test', phone: '+15550001', department_source_id: 'eng', status: 'active' };
const annLive = member({ account_id: 'a1', display_name: 'Ann', email: 'ann@x.test', phone: '+15550001', third_user_id: 'u1', department_id: 'd-eng' });

/** The row classifyPresent picks for one desired member against the setup. */
function rowFor(d: DesiredMember, s: Setup, taken: string[] = []): string {
  const { env, out } = setup({ ...s, desired: [d] });
  for (const t of taken) out.taken.add(t);
  return classifyPresent(memberKey(d, env.index), env, out).row;
}

describe('member table: which row a desired member matches (first match wins)', () => {
  it('picks each row of the table from source, mirror and ownership', () => {
    const other = member({ account_id: 'a9', display_name: 'Ann B', email: 'ann@x.test', third_user_id: 'old-9' });
    expect(rowFor({ ...ann, status: 'left' }, { live: [annLive], owned: [['u1', 'a1']] })).toBe('left_in_source');
    expect(rowFor({ ...ann, status: 'left' }, { live: [annLive] })).toBe('left_not_ours');
    expect(rowFor(ann, { live: [annLive], owned: [['u1', 'a1']] })).toBe('update_owned');
    expect(rowFor(ann, { live: [annLive], ctx: { pending: { members: new Set(['u1']) } } })).toBe('adopt_crashed_create');
    expect(rowFor(ann, { live: [annLive], adoptBy: ['email'] })).toBe('adopt_by_config');
    expect(rowFor(ann, { live: [annLive] })).toBe('conflict');
    expect(rowFor(ann, { live: [other], owned: [['old-9', 'a9']] })).toBe('rekey_owned');
    expect(rowFor(ann, { live: [other], adoptBy: ['email'] })).toBe('adopt_by_contact');
    expect(rowFor(ann, { live: [other] })).toBe('contact_conflict');
    expect(rowFor(ann, { live: [other] }, ['a9'])).toBe('create');
    expect(rowFor(ann, {})).toBe('create');
  });

  it('finds the owned account when the platform lost the third id (the state DB vouches for the account)', () => {
    const renamed = member({ account_id: 'a1', display_name: 'Ann', third_user_id: '' });
    expect(rowFor(ann, { live: [renamed], owned: [['u1', 'a1']] })).toBe('update_owned');
  });
});

describe('member table: rows for a member in the source', () => {
  it('left_in_source: removes the owned member (DELETE) and marks it leaving its department', () => {
    const { env, out } = setup({ live: [annLive], owned: [['u1', 'a1']] });
    PRESENT_ROWS.left_in_source({ row: 'left_in_source', desired: { ...ann, status: 'left' }, live: annLive, ownedAccount: 'a1', by: undefined }, env, out);
    expect(out.removals.map((c) => [c.id, c.op, c.reason, c.request?.method])).toEqual([['members:remove:u1', 'remove', 'status left in the source', 'DELETE']]);
    expect([...(out.taken as Set<string>)]).toEqual(['a1']);
    expect(out.leaving.get('d-eng')).toEqual(['members:remove:u1']);
  });

  it('left_not_ours: writes nothing', () => {
    const { env, out } = setup();
    PRESENT_ROWS.left_not_ours({ row: 'left_not_ours', desired: { ...ann, status: 'left' }, live: undefined, ownedAccount: undefined, by: undefined }, env, out);
    expect([out.upserts, out.removals, out.warnings, [...(out.taken as Set<string>)]]).toEqual([[], [], [], []]);
  });

  it('update_owned: patches only the owned fields that differ, moves and suspends, with the paths of the move', () => {
    const { env, out } = setup({ live: [annLive], owned: [['u1', 'a1']] });
    updateMember({ ...ann, display_name: 'Ann Lee', department_source_id: 'sales', status: 'suspended' }, annLive, undefined, env, out);
    const c = out.upserts[0]!;
    expect(c.id).toBe('members:update:u1');
    expect(c.fields).toEqual({ display_name: 'Ann Lee', department_id: 'd-sales', status: 'suspended' });
    expect(c.before).toEqual({ display_name: 'Ann', department_id: 'd-eng', status: 'active' });
    expect(c.paths).toEqual({ department_id: { before: '/Acme/d-eng', after: '/Acme/d-sales' } });
    expect(c.reason).toBe('display_name, department_id, status differ from the source');
    expect(out.leaving.get('d-eng')).toEqual(['members:update:u1']);
  });

  it('update_owned: no change when both sides agree; listed as staying when its department is being deleted', () => {
    const { env, out } = setup({ live: [annLive], owned: [['u1', 'a1']], removing: ['d-eng'] });
    updateMember(ann, annLive, undefined, env, out);
    expect(out.upserts).toEqual([]);
    expect(out.staying.get('d-eng')).toEqual(['member u1']);
    expect([...(out.handled as Set<string>)]).toEqual(['a1']);
  });

  it('update_owned: reports an e-mail the platform cannot patch as unpatchable drift (blocked)', () => {
    const { env, out } = setup({ live: [annLive], owned: [['u1', 'a1']] });
    updateMember({ ...ann, email: 'ann.lee@x.test' }, annLive, undefined, env, out);
    expect(out.upserts).toEqual([]);
    expect(out.warnings).toEqual([{ code: 'unpatchable_drift', entity: 'members', thirdId: 'u1', platformId: 'a1', blocks: 'unpatchable_drift', message: 'member u1: email "ann@x.test" on the platform, "ann.lee@x.test" in the source (the platform cannot patch these; not changed)' }]);
  });

  it('update_owned: an unknown department is warned about and left unchanged', () => {
    const { env, out } = setup({ live: [annLive], owned: [['u1', 'a1']] });
    updateMember({ ...ann, department_source_id: 'nowhere' }, annLive, undefined, env, out);
    expect(out.warnings.map((w) => [w.code, w.message])).toEqual([['unresolved_department', 'member u1: department nowhere is neither in the source nor on the platform; department left unchanged']]);
    expect(out.upserts).toEqual([]);
  });

  it('rekey_owned: an owned member under an old third id gets the new one', () => {
    const old = { ...annLive, third_user_id: 'old-1' };
    const { env, out } = setup({ live: [old], owned: [['old-1', 'a1']] });
    PRESENT_ROWS.rekey_owned({ row: 'rekey_owned', desired: ann, live: old, ownedAccount: undefined, by: undefined }, env, out);
    expect(out.upserts.map((c) => [c.id, c.fields, c.before])).toEqual([['members:update:u1', { third_user_id: 'u1' }, { third_user_id: 'old-1' }]]);
  });

  it('adopt_crashed_create: adopts its own crashed create, even with nothing to patch', () => {
    const { env, out } = setup({ live: [annLive] });
    PRESENT_ROWS.adopt_crashed_create({ row: 'adopt_crashed_create', desired: ann, live: annLive, ownedAccount: undefined, by: undefined }, env, out);
    const c = out.upserts[0]!;
    expect([c.id, c.op, c.adoptedBy, c.description, c.reason, c.request]).toEqual([
      'members:adopt:u1', 'adopt', 'crashed_create', 'adopt member "Ann" (matched by crashed create)', 'created by this sync in a run that stopped before recording it', undefined,
    ]);
  });

  it('adopt_by_config / adopt_by_contact: adopts by e-mail and patches the third id', () => {
    const other = member({ account_id: 'a9', display_name: 'Ann', email: 'ANN@x.test', third_user_id: '' });
    const { env, out } = setup({ live: [other], adoptBy: ['email'] });
    PRESENT_ROWS.adopt_by_contact({ row: 'adopt_by_contact', desired: { ...ann, department_source_id: undefined }, live: other, ownedAccount: undefined, by: 'email' }, env, out);
    const c = out.upserts[0]!;
    expect([c.id, c.adoptedBy, c.fields, c.description, c.reason]).toEqual([
      'members:adopt:u1', 'email', { third_user_id: 'u1' }, 'adopt member "Ann" (matched by email) and update third_user_id', 'sync.adopt.members matches by email',
    ]);
    expect(c.request).toEqual({ method: 'PATCH', path: '/org/members/a9', body: { third_user_id: 'u1' } });
  });

  it('conflict: same third id, not owned: blocked, left alone, taken', () => {
    const { env, out } = setup({ live: [annLive] });
    PRESENT_ROWS.conflict({ row: 'conflict', desired: ann, live: annLive, ownedAccount: undefined, by: undefined }, env, out);
    expect(out.warnings).toEqual([{ code: 'not_owned_conflict', entity: 'members', thirdId: 'u1', platformId: 'a1', blocks: 'not_owned_conflict', message: 'member "Ann" with third_user_id u1 exists but is not owned by this sync (enable sync.adopt.members: [email] or [phone] to take it over); left alone' }]);
    expect([...(out.taken as Set<string>)]).toEqual(['a1']);
    expect(out.upserts).toEqual([]);
  });

  it('contact_conflict: the same phone under another account: blocked as contact_not_owned, not created', () => {
    const other = member({ account_id: 'a9', display_name: 'Ann B', phone: '+1 555 0001', third_user_id: 'x' });
    const { env, out } = setup({ live: [other] });
    PRESENT_ROWS.contact_conflict({ row: 'contact_conflict', desired: { ...ann, phone: '+15550001' }, live: other, ownedAccount: undefined, by: undefined }, env, out);
    expect(out.warnings.map((w) => [w.blocks, w.message])).toEqual([
      ['contact_not_owned', 'member u1: "Ann B" with the same phone is already in the tenant and not owned by this sync (enable sync.adopt.members to take it over); not created'],
    ]);
  });

  it('create: posts the member into its department, with the department path shared between creates', () => {
    const { env, out } = setup();
    createMember({ row: 'create', desired: ann, live: undefined, ownedAccount: undefined, by: undefined }, env, out);
    createMember({ row: 'create', desired: { ...ann, source_id: 'u2', email: undefined, phone: undefined }, live: undefined, ownedAccount: undefined, by: undefined }, env, out);
    const [a, b] = out.upserts;
    expect([a!.id, a!.reason, a!.platformId, a!.description]).toEqual(['members:create:u1', 'missing on the platform', undefined, 'create member "Ann" <ann@x.test> in "/Acme/d-eng"']);
    expect(a!.fields).toEqual({ display_name: 'Ann', third_user_id: 'u1', email: 'ann@x.test', phone: '+15550001', department_id: 'd-eng' });
    expect(a!.paths).toBe(b!.paths);
  });

  it('create: a re-hire re-adds the owned account; a suspended one gets the PATCH that completes its create', () => {
    const { env, out } = setup();
    createMember({ row: 'create', desired: { ...ann, status: 'suspended', department_source_id: 'new' }, live: undefined, ownedAccount: 'a1', by: undefined }, env, out);
    expect(out.upserts.map((c) => [c.id, c.platformId, c.reason, c.dependsOn, c.completes])).toEqual([
      ['members:create:u1', 'a1', 're-hire: the member left and is in the source again', ['departments:create:new'], undefined],
      ['members:update:u1', undefined, 'status suspended in the source', ['members:create:u1'], 'members:create:u1'],
    ]);
    expect(out.upserts[1]!.request).toEqual({ method: 'PATCH', path: '/org/members/{ref:members:create:u1}', body: { status: 'suspended' } });
  });

  it('completes an earlier create that still owes its status, as a change of that create', () => {
    const { env, out } = setup({ ctx: { owedCompletions: new Map([['u1', { status: 'suspended' }]]) } });
    const diff = { fields: { status: 'suspended', title: 'Dev' } as Record<string, string>, before: { status: 'active', title: '' } as Record<string, string> };
    completeEarlierCreate({ ...ann, status: 'suspended' }, annLive, diff, env, out);
    expect(diff).toEqual({ fields: { title: 'Dev' }, before: { title: '' } });
    expect(out.upserts.map((c) => [c.id, c.fields, c.before, c.completes, c.description])).toEqual([
      ['members:complete:u1', { status: 'suspended' }, { status: 'active' }, 'members:create:u1', 'suspend new member "Ann" (status of its create, not yet set)'],
    ]);
  });
});

describe('member table: removal per sync.member_removal', () => {
  it('left: DELETE', () => {
    const { env, out } = setup({ removalMode: 'left' });
    removeMember(annLive, 'u1', 'gone from the source', env, out);
    expect(out.removals.map((c) => [c.id, c.op, c.request])).toEqual([['members:remove:u1', 'remove', { method: 'DELETE', path: '/org/members/a1' }]]);
  });

  it('suspended: PATCH status, and the department cleared when it is being deleted', () => {
    const { env, out } = setup({ removalMode: 'suspended', removing: ['d-eng'] });
    removeMember(annLive, 'u1', 'gone from the source', env, out);
    expect(out.removals.map((c) => [c.id, c.op, c.description, c.fields])).toEqual([['members:remove:u1', 'remove', 'suspend member "Ann"', { status: 'suspended', department_id: '' }]]);
    expect(out.leaving.get('d-eng')).toEqual(['members:remove:u1']);
  });

  it('suspended and already suspended: only taken out of a department being deleted, else nothing', () => {
    const suspended = { ...annLive, status: 'suspended' as const };
    const a = setup({ removalMode: 'suspended', removing: ['d-eng'] });
    removeMember(suspended, 'u1', 'gone from the source', a.env, a.out);
    expect(a.out.removals.map((c) => [c.id, c.op, c.fields])).toEqual([['members:update:u1', 'update', { department_id: '' }]]);
    const b = setup({ removalMode: 'suspended' });
    removeMember(suspended, 'u1', 'gone from the source', b.env, b.out);
    expect(b.out.removals).toEqual([]);
    expect([...(b.out.handled as Set<string>)]).toEqual(['a1']);
  });
});

describe('member table: rows for a member absent from the source', () => {
  const owned: [string, string][] = [['u1', 'a1']];

  it('classifies owned members that no desired member claimed', () => {
    const row = (s: Setup) => {
      const { env, out } = setup({ live: [annLive], owned, ...s });
      return classifyOwnedAbsent('u1', 'a1', env, out)?.row;
    };
    expect(row({ provided: false })).toBe('kept_not_provided');
    expect(row({ ctx: { held: { members: new Set(['u1']), departments: new Set(), positions: new Set() } } })).toBe('kept_quarantined');
    expect(row({})).toBe('gone');
    expect(row({ desired: [ann] })).toBeUndefined();
    expect(row({ live: [] })).toBeUndefined();
  });

  it('gone: removed with the reason "gone from the source"', () => {
    const { env, out } = setup({ live: [annLive], owned });
    ABSENT_ROWS.gone({ row: 'gone', live: annLive, thirdId: 'u1' }, env, out);
    expect(out.removals.map((c) => [c.id, c.reason])).toEqual([['members:remove:u1', 'gone from the source']]);
    expect([...(out.taken as Set<string>)]).toEqual(['a1']);
  });

  it('kept_quarantined: kept with a quarantined_kept warning, staying in a department being deleted', () => {
    const { env, out } = setup({ live: [annLive], owned, removing: ['d-eng'] });
    ABSENT_ROWS.kept_quarantined({ row: 'kept_quarantined', live: annLive, thirdId: 'u1' }, env, out);
    expect(out.warnings.map((w) => [w.code, w.message])).toEqual([['quarantined_kept', 'members u1 ("Ann") is quarantined in the source; kept on the platform, not removed']]);
    expect(out.staying.get('d-eng')).toEqual(['member u1']);
    expect(out.removals).toEqual([]);
  });

  it('kept_not_provided: kept, nothing written', () => {
    const { env, out } = setup({ live: [annLive], owned, provided: false });
    ABSENT_ROWS.kept_not_provided({ row: 'kept_not_provided', live: annLive, thirdId: 'u1' }, env, out);
    expect([out.removals, out.warnings, [...(out.handled as Set<string>)]]).toEqual([[], [], ['a1']]);
  });

  it('classifies live members left over: crashed create gone, not owned in an owned department, staying', () => {
    const row = (m: PlatformMember, s: Setup) => {
      const { env, out } = setup({ live: [m], ...s });
      return classifyLeftover(m, env, out)?.row;
    };
    const pending = { pending: { members: new Set(['u1']) }, pendingContacts: new Map([['u1', pendingContact('ann@x.test', undefined)]]) };
    expect(row(annLive, { ctx: pending })).toBe('crashed_create_gone');
    expect(row({ ...annLive, email: 'someone@else.test', phone: '' }, { ctx: pending })).toBeUndefined();
    expect(row(annLive, { ownedDepts: ['d-eng'] })).toBe('not_owned_absent');
    expect(row(annLive, { ownedDepts: ['d-eng'], provided: false })).toBeUndefined();
    expect(row(annLive, { removing: ['d-eng'] })).toBe('stays_in_deleted_department');
    expect(row(annLive, {})).toBeUndefined();
  });

  it('crashed_create_gone: removed, with the reason naming the crashed create', () => {
    const { env, out } = setup({ live: [annLive] });
    ABSENT_ROWS.crashed_create_gone({ row: 'crashed_create_gone', live: annLive, thirdId: 'u1' }, env, out);
    expect(out.removals.map((c) => [c.id, c.reason])).toEqual([['members:remove:u1', 'created by this sync in a run that stopped before recording it, and gone from the source']]);
  });

  it('not_owned_absent: warned about by name, left alone, and listed as staying when its department is being deleted', () => {
    const { env, out } = setup({ live: [annLive], ownedDepts: ['d-eng'], removing: ['d-eng'] });
    ABSENT_ROWS.not_owned_absent({ row: 'not_owned_absent', live: annLive, thirdId: 'u1' }, env, out);
    expect(out.warnings.map((w) => [w.code, w.platformId, w.message])).toEqual([
      ['not_owned_absent', 'a1', 'member "Ann" (third_user_id u1) is in no source but not owned by this sync (no state vouches for it): left alone; remove it by hand if the person left'],
    ]);
    expect(out.removals).toEqual([]);
    expect(out.staying.get('d-eng')).toEqual(['member "Ann" (not owned by this sync)']);
  });

  it('stays_in_deleted_department: named by third id when owned, by name when not', () => {
    const { env, out } = setup({ live: [annLive, { ...annLive, account_id: 'a2', display_name: 'Bo', third_user_id: 'u2' }], owned, removing: ['d-eng'] });
    ABSENT_ROWS.stays_in_deleted_department({ row: 'stays_in_deleted_department', live: annLive, thirdId: 'u1' }, env, out);
    ABSENT_ROWS.stays_in_deleted_department({ row: 'stays_in_deleted_department', live: { ...annLive, account_id: 'a2', display_name: 'Bo', third_user_id: 'u2' }, thirdId: 'u2' }, env, out);
    expect(out.staying.get('d-eng')).toEqual(['member u1', 'member "Bo" (not owned by this sync)']);
  });
});
