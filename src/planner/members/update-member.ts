/**
 * The write behind the rows that keep a live member (update owned, re-key owned, adopt): patch the owned fields that
 * differ, report unpatchable drift, and send what an earlier create still owes as part of that create.
 */
import type { Change, DesiredMember, PlanValue, PlatformMember } from '../../domain/index.js';
import { type Target, NO_DEPS, sharedDeps } from '../context.js';
import { currentDept, type FieldDiff, patchFields, reportDrift, wantedDept } from './member-fields.js';
import { type MemberEnv, type MemberResult, pushTo } from './types.js';

/** How a member not yet owned was matched for adoption. */
export type MemberAdoption = NonNullable<Change['adoptedBy']>;

/** Keeps a live member in line with the source: an update (owned) or an adoption (adoptedBy set). */
export function updateMember(d: DesiredMember, m: PlatformMember, adoptedBy: MemberAdoption | undefined, env: MemberEnv, out: MemberResult): void {
  out.taken.add(m.account_id);
  out.handled.add(m.account_id);
  const current = currentDept(m, env.input);
  const dept = wantedDept(d, current, env.input, out);
  const diff = patchFields(d, m, dept, current, env.ctx);
  reportDrift(d, m, out);
  if (adoptedBy === undefined) completeEarlierCreate(d, m, diff, env, out);
  const removingCurrent = current !== '' && env.input.removing.has(current);
  if (adoptedBy === undefined && Object.keys(diff.fields).length === 0) {
    if (removingCurrent) pushTo(out.staying, current, `member ${d.source_id}`);
    return;
  }
  const change = updateChange(d, m, diff, dept, adoptedBy, env);
  out.upserts.push(change);
  if (diff.fields.department_id !== undefined && current !== '') pushTo(out.leaving, current, change.id);
  else if (removingCurrent) pushTo(out.staying, current, `member ${d.source_id}`);
}

/** The update or adopt change of a live member. */
export function updateChange(d: DesiredMember, m: PlatformMember, { fields, before }: FieldDiff, dept: Target | undefined, adoptedBy: MemberAdoption | undefined, env: MemberEnv): Change {
  const keys = Object.keys(fields);
  const op = adoptedBy === undefined ? 'update' : 'adopt';
  const label = env.input.departmentLabel;
  const deptPaths = fields.department_id !== undefined && label ? { department_id: { before: label(m.department_id), after: label(dept ?? '') } } : undefined;
  return {
    ...(deptPaths ? { paths: deptPaths } : {}),
    id: `members:${op}:${d.source_id}`,
    entity: 'members',
    op,
    thirdId: d.source_id,
    platformId: m.account_id,
    description:
      adoptedBy !== undefined
        ? `adopt member "${m.display_name}" (matched by ${adoptedBy.replace('_', ' ')})${keys.length ? ` and update ${keys.join(', ')}` : ''}`
        : `update member "${m.display_name}" (${keys.join(', ')})`,
    reason:
      adoptedBy !== undefined
        ? adoptedBy === 'crashed_create'
          ? 'created by this sync in a run that stopped before recording it'
          : `sync.adopt.members matches by ${adoptedBy}`
        : `${keys.join(', ')} differ${keys.length === 1 ? 's' : ''} from the source`,
    fields,
    before,
    ...(keys.length > 0 ? { request: { method: 'PATCH' as const, path: `/org/members/${encodeURIComponent(m.account_id)}`, body: fields } } : {}),
    dependsOn: dept === undefined ? NO_DEPS : sharedDeps(env.ctx, dept),
    ...(adoptedBy === undefined ? {} : { adoptedBy }),
  };
}

/**
 * A create of an earlier run that still owes its completing change (its status PATCH failed): while the source
 * still asks for that status and the platform does not have it, the PATCH goes out as part of that create (a change
 * of its own that `completes` it), not in the member's update, so a create-only policy lets it through.
 * The owed fields move out of `diff` into that change.
 */
export function completeEarlierCreate(d: DesiredMember, m: PlatformMember, diff: FieldDiff, env: Pick<MemberEnv, 'ctx'>, out: Pick<MemberResult, 'upserts'>): void {
  const owed = env.ctx.owedCompletions?.get(d.source_id);
  if (owed === undefined || m.third_user_id !== d.source_id) return;
  const sf: Record<string, PlanValue> = {};
  const sb: Record<string, PlanValue> = {};
  for (const [k, v] of Object.entries(owed)) {
    if (diff.fields[k] !== v) continue;
    sf[k] = v;
    sb[k] = diff.before[k] ?? null;
    delete diff.fields[k];
    delete diff.before[k];
  }
  if (Object.keys(sf).length === 0) return;
  out.upserts.push({
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
}
