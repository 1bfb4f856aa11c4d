/** The `create` row of the department table, and the removal candidates. */
import type { PlanValue, PlatformDepartment } from '../../domain/index.js';
import { depsOf, isQuarantined, quarantinedKeptWarning, refTarget, targetValue } from '../context.js';
import { normText } from '../normalise.js';
import { departmentOwnership, MANAGED_BY_KEY } from '../ownership.js';
import type { DepartmentEnv, DepartmentIndex, DepartmentResult, DepartmentRow } from './types.js';

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
