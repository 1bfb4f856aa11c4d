/** Members: desired x mirror x ownership -> create / adopt / update / remove (see calculate-plan.ts). */
import type { Change, DesiredMember, PlanValue, PlatformMember } from '../domain/index.js';
import { memberCreateChange, memberCreateFields } from '../domain/index.js';
import { type DiffContext, type Target, keptBecauseQuarantined, NO_DEPS, sharedDeps, sharedValue, targetPath } from './context.js';
import { matchesPendingContact, normEmail, normPhone, normText } from './normalise.js';
import { memberOwnership } from './ownership.js';

/** How member diffs find departments. */
export interface MemberDiffInput {
  /** Source department id -> where it is (platform id or `@<change id>`), undefined when unknown. */
  resolveDepartment(sourceId: string): Target | undefined;
  /** Departments that may be deleted in this run: members without a department opinion are taken out of them. */
  removing: ReadonlySet<string>;
  /** The tenant root id (a member "in" it has no department). */
  tenantRootId: string;
  /** Whether a platform department is owned by this sync (managed_by); absent: no such report. */
  isOwnedDepartment?(platformId: string): boolean;
  /** The path (`/Acme/Sales`) of a department target, for descriptions; absent: none shown. */
  departmentLabel?(t: Target): string;
}

/** The member part of a plan. */
export interface MemberDiff {
  /** Creates, adoptions and updates. */
  upserts: Change[];
  removals: Change[];
  /** Members this sync owns (live), for the delete threshold. */
  ownedCount: number;
  /** Department id -> ids of the changes that take members out of it (a delete waits for them). */
  leaving: Map<string, string[]>;
  /** Department id -> members that stay in it (a delete of it cannot succeed). */
  staying: Map<string, string[]>;
}

/** Warning code: a member gone from the sources that looks like this sync's but is not owned (reported, kept). */
export const NOT_OWNED_ABSENT = 'not_owned_absent';

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/** Diffs desired members against the mirror. */
export function diffMembers(desired: readonly DesiredMember[], all: readonly PlatformMember[], ownedMembers: ReadonlyMap<string, string>, provided: boolean, ctx: DiffContext, input: MemberDiffInput): MemberDiff {
  const adoptBy = ctx.opts.adopt?.members ?? [];
  const removalMode = ctx.opts.memberRemoval;
  const ownedAccounts = new Set(ownedMembers.values());
  const liveByThird = new Map<string, PlatformMember>();
  const liveByAccount = new Map<string, PlatformMember>();
  let ownedCount = 0;
  for (const m of all) {
    if (m.status === 'left') continue;
    liveByAccount.set(m.account_id, m);
    if (m.third_user_id !== '') liveByThird.set(m.third_user_id, m);
    if (ownedAccounts.has(m.account_id)) ownedCount += 1;
  }
  // Built only when some desired member has no live record under its third id (never in a steady-state run).
  let contacts: { byEmail: Map<string, PlatformMember>; byPhone: Map<string, PlatformMember> } | undefined;
  const contactIndex = () => {
    if (contacts) return contacts;
    contacts = { byEmail: new Map(), byPhone: new Map() };
    for (const m of liveByAccount.values()) {
      if (m.email !== '') contacts.byEmail.set(normEmail(m.email), m);
      if (m.phone !== '') contacts.byPhone.set(normPhone(m.phone), m);
    }
    return contacts;
  };
  const upserts: Change[] = [];
  const removals: Change[] = [];
  const leaving = new Map<string, string[]>();
  const staying = new Map<string, string[]>();
  const taken = new Set<string>();
  /** Accounts whose fate this plan decided (changed, or checked and left where they are). */
  const handled = new Set<string>();
  const desiredIds = new Set<string>();
  // Every create into one department shows the same path: one object per department, not one per member.
  const pathsByDept = new Map<string, NonNullable<Change['paths']>>();
  const sharedPaths = (dept: string): NonNullable<Change['paths']> => {
    let p = pathsByDept.get(dept);
    if (!p) pathsByDept.set(dept, (p = { department_id: { after: input.departmentLabel!(dept) } }));
    return p;
  };
  const currentDept = (m: PlatformMember): string => (m.department_id === input.tenantRootId ? '' : m.department_id);
  /** A live member this sync created in a run that stopped before recording it (pending, same third id and contact). */
  const crashedCreate = (m: PlatformMember): boolean => {
    if (m.third_user_id === '' || ctx.pending.members?.has(m.third_user_id) !== true) return false;
    const contact = ctx.pendingContacts?.get(m.third_user_id);
    return contact === undefined || matchesPendingContact(contact, m.email, m.phone);
  };

  /** The department a desired member should be in; undefined = no opinion (keep what the platform has). */
  const wantedDept = (d: DesiredMember, current: string | undefined): Target | undefined => {
    const sid = d.department_source_id;
    if (sid) {
      const t = input.resolveDepartment(sid);
      if (t !== undefined) return t;
      ctx.warnings.push({ code: 'unresolved_department', entity: 'members', thirdId: d.source_id, message: `member ${d.source_id}: department ${sid} is neither in the source nor on the platform; department left unchanged` });
      return undefined;
    }
    if (current !== undefined && current !== '' && input.removing.has(current)) return '';
    return undefined;
  };

  const removal = (m: PlatformMember, thirdId: string, reason: string): void => {
    handled.add(m.account_id);
    const dept = currentDept(m);
    const clearDept = dept !== '' && input.removing.has(dept);
    if (removalMode === 'left') {
      const id = `members:remove:${thirdId || m.account_id}`;
      removals.push({
        id,
        entity: 'members',
        op: 'remove',
        thirdId,
        platformId: m.account_id,
        description: `remove member "${m.display_name}" (DELETE: status left)`,
        reason,
        fields: {},
        request: { method: 'DELETE', path: `/org/members/${encodeURIComponent(m.account_id)}` },
        dependsOn: NO_DEPS,
      });
      if (dept !== '') push(leaving, dept, id);
      return;
    }
    if (m.status === 'suspended' && !clearDept) return;
    const fields: Record<string, PlanValue> = {};
    const before: Record<string, PlanValue> = {};
    if (m.status !== 'suspended') {
      fields.status = 'suspended';
      before.status = m.status;
    }
    if (clearDept) {
      fields.department_id = '';
      before.department_id = m.department_id;
    }
    const op = fields.status === undefined ? 'update' : 'remove';
    const id = `members:${op}:${thirdId || m.account_id}`;
    removals.push({
      id,
      entity: 'members',
      op,
      thirdId,
      platformId: m.account_id,
      description: op === 'remove' ? `suspend member "${m.display_name}"` : `take suspended member "${m.display_name}" out of a department being deleted`,
      reason,
      fields,
      before,
      request: { method: 'PATCH', path: `/org/members/${encodeURIComponent(m.account_id)}`, body: fields },
      dependsOn: NO_DEPS,
    });
    if (clearDept) push(leaving, dept, id);
  };

  const patchFields = (d: DesiredMember, m: PlatformMember, dept: Target | undefined) => {
    const fields: Record<string, PlanValue> = {};
    const before: Record<string, PlanValue> = {};
    if (normText(d.display_name) !== normText(m.display_name)) {
      fields.display_name = normText(d.display_name);
      before.display_name = m.display_name;
    }
    if (d.title !== undefined && normText(d.title) !== normText(m.title)) {
      fields.title = normText(d.title);
      before.title = m.title;
    }
    if (m.third_user_id !== d.source_id) {
      fields.third_user_id = d.source_id;
      before.third_user_id = m.third_user_id;
    }
    if (dept !== undefined && dept !== currentDept(m)) {
      fields.department_id = sharedValue(ctx, dept);
      before.department_id = m.department_id;
    }
    const want = d.status === 'suspended' ? 'suspended' : 'active';
    if (want === 'suspended' && m.status !== 'suspended') {
      fields.status = 'suspended';
      before.status = m.status;
    } else if (want === 'active' && m.status === 'suspended') {
      fields.status = 'active';
      before.status = m.status;
    }
    return { fields, before };
  };

  const drift = (d: DesiredMember, m: PlatformMember): void => {
    const diffs: string[] = [];
    if (d.email !== undefined && d.email !== '' && normEmail(d.email) !== normEmail(m.email)) diffs.push(`email "${m.email}" on the platform, "${d.email}" in the source`);
    if (d.phone !== undefined && d.phone !== '' && normPhone(d.phone) !== normPhone(m.phone)) diffs.push(`phone "${m.phone}" on the platform, "${d.phone}" in the source`);
    if (diffs.length > 0) {
      ctx.warnings.push({ code: 'unpatchable_drift', entity: 'members', thirdId: d.source_id, platformId: m.account_id, blocks: 'unpatchable_drift', message: `member ${d.source_id}: ${diffs.join('; ')} (the platform cannot patch these; not changed)` });
    }
  };

  const update = (d: DesiredMember, m: PlatformMember, adoptedBy?: Change['adoptedBy']): void => {
    taken.add(m.account_id);
    handled.add(m.account_id);
    const current = currentDept(m);
    const dept = wantedDept(d, current);
    const { fields, before } = patchFields(d, m, dept);
    drift(d, m);
    if (adoptedBy === undefined) completeEarlierCreate(d, m, fields, before);
    const keys = Object.keys(fields);
    const leavesDept = fields.department_id !== undefined && current !== '';
    if (adoptedBy === undefined && keys.length === 0) {
      if (current !== '' && input.removing.has(current)) push(staying, current, `member ${d.source_id}`);
      return;
    }
    const op = adoptedBy === undefined ? 'update' : 'adopt';
    const id = `members:${op}:${d.source_id}`;
    const deptPaths = fields.department_id !== undefined && input.departmentLabel ? { department_id: { before: input.departmentLabel(m.department_id), after: input.departmentLabel(dept ?? '') } } : undefined;
    upserts.push({
      ...(deptPaths ? { paths: deptPaths } : {}),
      id,
      entity: 'members',
      op,
      thirdId: d.source_id,
      platformId: m.account_id,
      description:
        op === 'adopt'
          ? `adopt member "${m.display_name}" (matched by ${adoptedBy!.replace('_', ' ')})${keys.length ? ` and update ${keys.join(', ')}` : ''}`
          : `update member "${m.display_name}" (${keys.join(', ')})`,
      reason:
        op === 'adopt'
          ? adoptedBy === 'crashed_create'
            ? 'created by this sync in a run that stopped before recording it'
            : `sync.adopt.members matches by ${adoptedBy!}`
          : `${keys.join(', ')} differ${keys.length === 1 ? 's' : ''} from the source`,
      fields,
      before,
      ...(keys.length > 0 ? { request: { method: 'PATCH' as const, path: `/org/members/${encodeURIComponent(m.account_id)}`, body: fields } } : {}),
      dependsOn: dept === undefined ? NO_DEPS : sharedDeps(ctx, dept),
      ...(adoptedBy === undefined ? {} : { adoptedBy }),
    });
    if (leavesDept) push(leaving, current, id);
    else if (current !== '' && input.removing.has(current)) push(staying, current, `member ${d.source_id}`);
  };

  /**
   * A create of an earlier run that still owes its completing change (its status PATCH failed): while the source
   * still asks for that status and the platform does not have it, the PATCH goes out as part of that create (a change
   * of its own that `completes` it), not in the member's update, so a create-only policy lets it through.
   */
  const completeEarlierCreate = (d: DesiredMember, m: PlatformMember, fields: Record<string, PlanValue>, before: Record<string, PlanValue>): void => {
    const owed = ctx.owedCompletions?.get(d.source_id);
    if (owed === undefined || m.third_user_id !== d.source_id) return;
    const sf: Record<string, PlanValue> = {};
    const sb: Record<string, PlanValue> = {};
    for (const [k, v] of Object.entries(owed)) {
      if (fields[k] !== v) continue;
      sf[k] = v;
      sb[k] = before[k] ?? null;
      delete fields[k];
      delete before[k];
    }
    if (Object.keys(sf).length === 0) return;
    upserts.push({
      id: `members:complete:${d.source_id}`,
      entity: 'members',
      op: 'update',
      thirdId: d.source_id,
      platformId: m.account_id,
      description: `${sf.status === 'suspended' ? 'suspend' : 'complete'} new member "${m.display_name}" (${Object.keys(sf).join(', ')} of its create, not yet set)`,
      reason: `part of its create in an earlier run, whose ${Object.keys(sf).join(', ')} could not be set then`,
      fields: sf,
      before: sb,
      request: { method: 'PATCH', path: `/org/members/${encodeURIComponent(m.account_id)}`, body: sf },
      dependsOn: NO_DEPS,
      completes: `members:create:${d.source_id}`,
    });
  };

  for (const d of desired) {
    const sid = d.source_id;
    desiredIds.add(sid);
    const ownedAccount = ownedMembers.get(sid);
    let existing = liveByThird.get(sid);
    if (ownedAccount !== undefined && existing?.account_id !== ownedAccount) {
      const byAccount = liveByAccount.get(ownedAccount);
      if (byAccount) existing = byAccount;
    }
    if (d.status === 'left') {
      if (existing && memberOwnership(existing, ownedAccounts) === 'owned') {
        taken.add(existing.account_id);
        removal(existing, sid, 'status left in the source');
      }
      continue;
    }
    if (existing) {
      if (memberOwnership(existing, ownedAccounts) === 'owned') {
        update(d, existing);
        continue;
      }
      if (crashedCreate(existing)) {
        update(d, existing, 'crashed_create');
        continue;
      }
      const by = adoptMatch(d, existing, adoptBy);
      if (by) {
        update(d, existing, by);
        continue;
      }
      taken.add(existing.account_id);
      ctx.warnings.push({
        code: 'not_owned_conflict',
        entity: 'members',
        thirdId: sid,
        platformId: existing.account_id,
        blocks: 'not_owned_conflict',
        message: `member "${existing.display_name}" with third_user_id ${sid} exists but is not owned by this sync (enable sync.adopt.members: [email] or [phone] to take it over); left alone`,
      });
      continue;
    }
    // No live record with this third id: is the person already a member under another id (phone first, then e-mail)?
    const other = d.phone || d.email ? ((d.phone ? contactIndex().byPhone.get(normPhone(d.phone)) : undefined) ?? (d.email ? contactIndex().byEmail.get(normEmail(d.email)) : undefined)) : undefined;
    if (other && !taken.has(other.account_id)) {
      if (memberOwnership(other, ownedAccounts) === 'owned') {
        // Ours under an old third id: re-key it rather than create a duplicate.
        update(d, other);
        continue;
      }
      const by = adoptMatch(d, other, adoptBy);
      if (by) {
        update(d, other, by);
        continue;
      }
      taken.add(other.account_id);
      ctx.warnings.push({
        code: 'not_owned_conflict',
        entity: 'members',
        thirdId: sid,
        platformId: other.account_id,
        blocks: 'contact_not_owned',
        message: `member ${sid}: "${other.display_name}" with the same ${d.phone && other.phone && normPhone(d.phone) === normPhone(other.phone) ? 'phone' : 'e-mail'} is already in the tenant and not owned by this sync (enable sync.adopt.members to take it over); not created`,
      });
      continue;
    }
    const dept = wantedDept(d, undefined);
    const fields = memberCreateFields(normText(d.display_name), sid, {
      email: d.email ? normEmail(d.email) : undefined,
      phone: d.phone ? normPhone(d.phone) : undefined,
      title: d.title !== undefined && d.title !== '' ? normText(d.title) : undefined,
      department_id: dept !== undefined && dept !== '' ? sharedValue(ctx, dept) : undefined,
    });
    const id = `members:create:${sid}`;
    const rehire = ownedAccount !== undefined;
    const paths = dept !== undefined && dept !== '' && input.departmentLabel ? sharedPaths(dept) : undefined;
    upserts.push(
      memberCreateChange({
        id,
        thirdId: sid,
        platformId: rehire ? ownedAccount : undefined,
        paths,
        reason: rehire ? 're-hire: the member left and is in the source again' : 'missing on the platform',
        fields,
        dependsOn: dept === undefined ? NO_DEPS : sharedDeps(ctx, dept),
      }),
    );
    if (d.status === 'suspended') {
      const sf: Record<string, PlanValue> = { status: 'suspended' };
      upserts.push({
        id: `members:update:${sid}`,
        entity: 'members',
        op: 'update',
        thirdId: sid,
        description: `suspend new member "${fields.display_name as string}"`,
        reason: 'status suspended in the source',
        fields: sf,
        request: { method: 'PATCH', path: `/org/members/${targetPath(`@${id}`)}`, body: sf },
        dependsOn: [id],
        completes: id,
      });
    }
  }

  for (const [thirdId, account] of ownedMembers) {
    if (desiredIds.has(thirdId) || taken.has(account)) continue;
    const m = liveByAccount.get(account);
    if (!m) continue;
    if (!provided || keptBecauseQuarantined(ctx, 'members', thirdId, account, m.display_name)) {
      handled.add(account);
      const dept = currentDept(m);
      if (dept !== '' && input.removing.has(dept)) push(staying, dept, `member ${thirdId}`);
      continue;
    }
    taken.add(account);
    removal(m, thirdId, 'gone from the source');
  }
  // This sync's crashed creates of members the source no longer has: removed like any owned member.
  if (provided && ctx.pending.members && ctx.pending.members.size > 0) {
    for (const m of liveByAccount.values()) {
      if (handled.has(m.account_id) || taken.has(m.account_id) || ownedAccounts.has(m.account_id) || desiredIds.has(m.third_user_id)) continue;
      if (!crashedCreate(m)) continue;
      taken.add(m.account_id);
      removal(m, m.third_user_id, 'created by this sync in a run that stopped before recording it, and gone from the source');
    }
  }
  // Gone from the sources, live, not owned, with a third id, in a department this sync owns: the kind of member this
  // sync made, but no state vouches for it any more (its state DB was lost, or it was released). It is left alone,
  // and said so by name rather than silently kept.
  if (provided && input.isOwnedDepartment) {
    for (const m of liveByAccount.values()) {
      if (handled.has(m.account_id) || taken.has(m.account_id) || ownedAccounts.has(m.account_id)) continue;
      if (m.third_user_id === '' || desiredIds.has(m.third_user_id) || ctx.held?.members.has(m.third_user_id) === true) continue;
      if (!input.isOwnedDepartment(m.department_id)) continue;
      ctx.warnings.push({
        code: NOT_OWNED_ABSENT,
        entity: 'members',
        thirdId: m.third_user_id,
        platformId: m.account_id,
        message: `member "${m.display_name}" (third_user_id ${m.third_user_id}) is in no source but not owned by this sync (no state vouches for it): left alone; remove it by hand if the person left`,
      });
    }
  }
  for (const m of liveByAccount.values()) {
    if (handled.has(m.account_id)) continue;
    const dept = currentDept(m);
    if (dept !== '' && input.removing.has(dept)) push(staying, dept, ownedAccounts.has(m.account_id) ? `member ${m.third_user_id || m.account_id}` : `member "${m.display_name}" (not owned by this sync)`);
  }
  return { upserts, removals, ownedCount, leaving, staying };
}

function adoptMatch(d: DesiredMember, m: PlatformMember, adoptBy: readonly string[]): 'email' | 'phone' | undefined {
  if (adoptBy.includes('email') && d.email && m.email && normEmail(d.email) === normEmail(m.email)) return 'email';
  if (adoptBy.includes('phone') && d.phone && m.phone && normPhone(d.phone) === normPhone(m.phone)) return 'phone';
  return undefined;
}
