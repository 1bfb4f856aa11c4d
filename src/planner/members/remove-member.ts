/**
 * The write behind the rows that take a member out (status left in the source, gone from the source, crashed create
 * gone), per sync.member_removal:
 *
 * | member_removal | platform status | in a department being deleted | change                                  |
 * |----------------|-----------------|-------------------------------|-----------------------------------------|
 * | left           | any             | any                           | remove: DELETE (status left)            |
 * | suspended      | not suspended   | any                           | remove: PATCH status suspended (+ department cleared when it is being deleted) |
 * | suspended      | suspended       | yes                           | update: PATCH department cleared        |
 * | suspended      | suspended       | no                            | nothing (already where it should be)    |
 */
import type { PlanValue, PlatformMember } from '../../domain/index.js';
import { NO_DEPS } from '../context.js';
import { currentDept } from './member-fields.js';
import { type MemberEnv, type MemberResult, pushTo } from './types.js';

/** Takes a live member out as sync.member_removal says; `thirdId` and `reason` name it in the change. */
export function removeMember(m: PlatformMember, thirdId: string, reason: string, env: MemberEnv, out: MemberResult): void {
  out.handled.add(m.account_id);
  const dept = currentDept(m, env.input);
  if (env.removalMode === 'left') deleteMember(m, thirdId, reason, dept, out);
  else suspendMember(m, thirdId, reason, dept, env, out);
}

/** member_removal left: DELETE, which the platform records as status left. */
export function deleteMember(m: PlatformMember, thirdId: string, reason: string, dept: string, out: MemberResult): void {
  const id = `members:remove:${thirdId || m.account_id}`;
  out.removals.push({
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
  if (dept !== '') pushTo(out.leaving, dept, id);
}

/** member_removal suspended: PATCH status suspended, and out of a department being deleted. */
export function suspendMember(m: PlatformMember, thirdId: string, reason: string, dept: string, env: MemberEnv, out: MemberResult): void {
  const clearDept = dept !== '' && env.input.removing.has(dept);
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
  out.removals.push({
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
  if (clearDept) pushTo(out.leaving, dept, id);
}
