/** The `create` row: a desired member with no live record, by third id or contact (a re-hire when it left). */
import type { Change, PlanValue } from '../../domain/index.js';
import { NO_DEPS, sharedDeps, sharedValue, targetPath } from '../context.js';
import { normText } from '../normalise.js';
import { sourceCreateChange } from './source-create.js';
import { wantedDept } from './member-fields.js';
import type { MemberEnv, MemberResult, MemberRow } from './types.js';

/** Creates the member (re-adds the account it had when the state DB still records one), and suspends it after. */
export function createMember({ desired: d, ownedAccount }: MemberRow, env: MemberEnv, out: MemberResult): void {
  const sid = d.source_id;
  const dept = wantedDept(d, undefined, env.input, out);
  const inDept = dept !== undefined && dept !== '';
  const rehire = ownedAccount !== undefined;
  // The fields are derived from the desired member when read (source-create.ts): a million creates hold no copy.
  out.upserts.push(
    sourceCreateChange({
      member: d,
      department: inDept ? sharedValue(env.ctx, dept) : undefined,
      platformId: rehire ? ownedAccount : undefined,
      paths: inDept && env.input.departmentLabel ? sharedPaths(dept, env, out) : undefined,
      reason: rehire ? 're-hire: the member left and is in the source again' : 'missing on the platform',
      dependsOn: dept === undefined ? NO_DEPS : sharedDeps(env.ctx, dept),
    }),
  );
  if (d.status === 'suspended') out.upserts.push(suspendNewMember(sid, `members:create:${sid}`, normText(d.display_name)));
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

/** Every create into one department shows the same path object. */
function sharedPaths(dept: string, env: MemberEnv, out: MemberResult): NonNullable<Change['paths']> {
  let p = out.pathsByDept.get(dept);
  if (!p) out.pathsByDept.set(dept, (p = { department_id: { after: env.input.departmentLabel!(dept) } }));
  return p;
}
