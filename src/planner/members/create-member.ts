/** The `create` row: a desired member with no live record, by third id or contact (a re-hire when it left). */
import type { Change, PlanValue } from '../../domain/index.js';
import { NO_DEPS, sharedDeps, sharedValue, targetPath } from '../context.js';
import { sourceCreateChange, type Placement } from './source-create.js';
import { suspendNewMemberChange } from './suspend-new.js';
import { wantedDept } from './member-fields.js';
import type { MemberEnv, MemberResult, MemberRow } from './types.js';

/** Creates the member (re-adds the account it had when the state DB still records one), and suspends it after. */
export function createMember({ desired: d, ownedAccount }: MemberRow, env: MemberEnv, out: MemberResult): void {
  const dept = wantedDept(d, undefined, env.input, out);
  const rehire = ownedAccount !== undefined;
  // The fields are derived from the desired member when read (source-create.ts): a million creates hold no copy.
  out.upserts.push(
    sourceCreateChange({
      member: d,
      placement: placementOf(dept, env, out),
      platformId: rehire ? ownedAccount : undefined,
      reason: rehire ? 're-hire: the member left and is in the source again' : 'missing on the platform',
    }),
  );
  if (d.status === 'suspended') out.upserts.push(suspendNewMemberChange(d));
}

/**
 * A create in two steps: the platform creates members active, so a member the source has suspended gets a PATCH
 * right after its POST, as part of that create (`completes`: a create-only policy lets it through).
 */
export function suspendNewMember(sid: string, createId: string, displayName: string): Change {
  const sf: Record<string, PlanValue> = { status: 'suspended' };
  return {
    id: `members:update:${sid}`,
    entity: 'members',
    op: 'update',
    thirdId: sid,
    description: `suspend new member "${displayName}"`,
    reason: 'status suspended in the source',
    fields: sf,
    request: { method: 'PATCH', path: `/org/members/${targetPath(`@${createId}`)}`, body: sf },
    dependsOn: [createId],
    completes: createId,
  };
}

/** Every create into one department shares one placement: its department's id value, path and dependencies. */
function placementOf(dept: string | undefined, env: MemberEnv, out: MemberResult): Placement {
  // No department and an empty one place a member alike (no department_id, no path, no dependency).
  const inDept = dept !== undefined && dept !== '';
  const key = inDept ? dept : '';
  let p = out.placements.get(key);
  if (p === undefined) {
    p = inDept
      ? { department: sharedValue(env.ctx, dept), paths: env.input.departmentLabel ? { department_id: { after: env.input.departmentLabel(dept) } } : undefined, dependsOn: sharedDeps(env.ctx, dept) }
      : { department: undefined, paths: undefined, dependsOn: NO_DEPS };
    out.placements.set(key, p);
  }
  return p;
}
