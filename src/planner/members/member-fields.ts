/** What the member rows compare: departments, owned fields, contacts, and the marks of a crashed create. */
import type { DesiredMember, PlanValue, PlatformMember } from '../../domain/index.js';
import { type DiffContext, type Target, sharedValue } from '../context.js';
import { matchesPendingContact, normEmail, normPhone, normText } from '../normalise.js';
import type { MemberDiffInput, MemberResult } from './types.js';

/** The fields a PATCH sets and their values on the platform before it. */
export interface FieldDiff {
  fields: Record<string, PlanValue>;
  before: Record<string, PlanValue>;
}

/** A member's department as the plan compares it: '' for the tenant root (no department). */
export function currentDept(m: PlatformMember, input: Pick<MemberDiffInput, 'tenantRootId'>): string {
  return m.department_id === input.tenantRootId ? '' : m.department_id;
}

/** The department a desired member should be in; undefined = no opinion (keep what the platform has). */
export function wantedDept(d: DesiredMember, current: string | undefined, input: MemberDiffInput, out: Pick<MemberResult, 'warnings'>): Target | undefined {
  const sid = d.department_source_id;
  if (sid) {
    const t = input.resolveDepartment(sid);
    if (t !== undefined) return t;
    out.warnings.push({ code: 'unresolved_department', entity: 'members', thirdId: d.source_id, message: `member ${d.source_id}: department ${sid} is neither in the source nor on the platform; department left unchanged` });
    return undefined;
  }
  if (current !== undefined && current !== '' && input.removing.has(current)) return '';
  return undefined;
}

/** The owned fields that differ: display name, title, third id, department, status (in that order). */
export function patchFields(d: DesiredMember, m: PlatformMember, dept: Target | undefined, current: string, ctx: DiffContext): FieldDiff {
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
  if (dept !== undefined && dept !== current) {
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
}

/** Warns when the source's e-mail or phone differs from the platform's (the platform cannot patch them). */
export function reportDrift(d: DesiredMember, m: PlatformMember, out: Pick<MemberResult, 'warnings'>): void {
  const diffs: string[] = [];
  if (d.email !== undefined && d.email !== '' && normEmail(d.email) !== normEmail(m.email)) diffs.push(`email "${m.email}" on the platform, "${d.email}" in the source`);
  if (d.phone !== undefined && d.phone !== '' && normPhone(d.phone) !== normPhone(m.phone)) diffs.push(`phone "${m.phone}" on the platform, "${d.phone}" in the source`);
  if (diffs.length > 0) {
    out.warnings.push({ code: 'unpatchable_drift', entity: 'members', thirdId: d.source_id, platformId: m.account_id, blocks: 'unpatchable_drift', message: `member ${d.source_id}: ${diffs.join('; ')} (the platform cannot patch these; not changed)` });
  }
}

/** How sync.adopt.members matches a desired member to a live one, if it does. */
export function adoptMatch(d: DesiredMember, m: PlatformMember, adoptBy: readonly string[]): 'email' | 'phone' | undefined {
  if (adoptBy.includes('email') && d.email && m.email && normEmail(d.email) === normEmail(m.email)) return 'email';
  if (adoptBy.includes('phone') && d.phone && m.phone && normPhone(d.phone) === normPhone(m.phone)) return 'phone';
  return undefined;
}

/** A live member this sync created in a run that stopped before recording it (pending, same third id and contact). */
export function isCrashedCreate(m: PlatformMember, ctx: Pick<DiffContext, 'pending' | 'pendingContacts'>): boolean {
  if (m.third_user_id === '' || ctx.pending.members?.has(m.third_user_id) !== true) return false;
  const contact = ctx.pendingContacts?.get(m.third_user_id);
  return contact === undefined || matchesPendingContact(contact, m.email, m.phone);
}
