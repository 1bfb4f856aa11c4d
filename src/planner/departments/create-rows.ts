/** The `create` row of the department table, the name-taken warning beside it, and the removal candidates. */
import type { DesiredDepartment, PlanValue, PlanWarning, PlatformDepartment } from '../../domain/index.js';
import { type Target, depsOf, isQuarantined, quarantinedKeptWarning, refTarget, targetValue } from '../context.js';
import { normText } from '../normalise.js';
import { departmentOwnership, MANAGED_BY_KEY } from '../ownership.js';
import { nameKey } from './department-index.js';
import type { DepartmentEnv, DepartmentIndex, DepartmentResult, DepartmentRow } from './types.js';

/** Warning code: a department this plan creates has the name of a live one under the same parent that is not this sync's. */
export const DEPARTMENT_NAME_TAKEN = 'department_name_taken';

/** No live department with its third id and none adopted by name: create it (under its parent's target). */
export function createDepartment({ desired: d, parent }: DepartmentRow, env: DepartmentEnv, out: DepartmentResult): void {
  const sid = d.source_id;
  const name = normText(d.name);
  const id = `departments:create:${sid}`;
  const fields: Record<string, PlanValue> = {
    name,
    parent_id: parent === env.index.root.id ? '' : targetValue(parent),
    third_department_id: sid,
    metadata: { [MANAGED_BY_KEY]: env.ctx.syncId },
  };
  if (d.sort_order !== undefined) fields.sort_order = d.sort_order;
  const parentLabel = env.label(parent);
  const twin = nameTwin(d, parent, env, out);
  if (twin) out.warnings.push(nameTakenWarning(d, parentLabel, twin));
  out.creates.push({
    id,
    entity: 'departments',
    op: 'create',
    thirdId: sid,
    description: `create department "${name}" under "${parentLabel}"`,
    paths: { parent_id: { after: parentLabel } },
    reason: 'missing on the platform',
    fields,
    request: { method: 'POST', path: '/org/departments', body: fields },
    dependsOn: depsOf(parent),
  });
  out.resolve.set(sid, refTarget(id));
  out.newParentOf.set(refTarget(id), parent);
  out.newPaths.set(refTarget(id), `${parentLabel}/${name}`);
}

/**
 * A live department of the same name under the same (live) parent that is another sync's or nobody's, not claimed by
 * this plan nor by another desired department's third id: the create would put a second one beside it.
 */
export function nameTwin(d: DesiredDepartment, parent: Target, env: DepartmentEnv, out: Pick<DepartmentResult, 'taken'>): PlatformDepartment | undefined {
  if (parent.startsWith('@')) return undefined;
  return (env.index.childrenByName.get(nameKey(parent, d.name)) ?? []).find(
    (c) => !out.taken.has(c.id) && departmentOwnership(c, env.ctx.syncId) !== 'owned' && (c.third_department_id === '' || !env.index.desiredById.has(c.third_department_id)),
  );
}

/** The `department_name_taken` warning: who owns the twin, and the three ways out (adopt, rename, scope). */
export function nameTakenWarning(d: DesiredDepartment, parentLabel: string, twin: PlatformDepartment): PlanWarning {
  const by = twin.metadata?.[MANAGED_BY_KEY];
  const otherSync = typeof by === 'string' && by !== '' ? by : undefined;
  const adopt = otherSync === undefined ? 'adopt it (sync.adopt.departments: [name])' : `adopt it (sync.adopt.departments: [name], once sync ${otherSync} has released it with \`orgsync release\`)`;
  return {
    code: DEPARTMENT_NAME_TAKEN,
    entity: 'departments',
    thirdId: d.source_id,
    platformId: twin.id,
    message:
      `department ${d.source_id} ("${normText(d.name)}") would be created under "${parentLabel}" beside department ${twin.id} ("${twin.path}") of the same name, ` +
      `owned by ${otherSync === undefined ? 'no sync' : `sync ${otherSync}`}; to have one department, ${adopt}, rename it in the source, or scope this sync under a department of its own (sync.root_department)`,
  };
}

/** Owned live departments gone from the source (quarantined ones kept, with a warning): candidates for removal. */
export function removalCandidates(index: DepartmentIndex, env: Pick<DepartmentEnv, 'ctx'>, out: Pick<DepartmentResult, 'taken' | 'warnings'>): PlatformDepartment[] {
  const found: PlatformDepartment[] = [];
  for (const d of index.live) {
    if (d.depth === 0 || d.id === index.syncRootId || out.taken.has(d.id)) continue;
    if (departmentOwnership(d, env.ctx.syncId) !== 'owned') continue;
    if (d.third_department_id !== '' && index.desiredById.has(d.third_department_id)) continue;
    if (isQuarantined(env.ctx, 'departments', d.third_department_id)) {
      out.warnings.push(quarantinedKeptWarning('departments', d.third_department_id, d.id, d.name));
      continue;
    }
    found.push(d);
  }
  return found;
}
