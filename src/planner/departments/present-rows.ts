/** The rows of the department table for a department in the source: which one matches, and one handler per row. */
import type { DesiredDepartment, PlanValue, PlatformDepartment } from '../../domain/index.js';
import { type Target, depsOf, metadataValue, NO_DEPS } from '../context.js';
import { normText } from '../normalise.js';
import { departmentOwnership, MANAGED_BY_KEY } from '../ownership.js';
import { nameKey } from './department-index.js';
import type { DepartmentEnv, DepartmentResult, DepartmentRow, DepartmentRowName } from './types.js';

/** Where a desired department hangs: the sync root, its parent's target, or undefined (parent unknown or skipped). */
export function parentTarget(d: DesiredDepartment, env: DepartmentEnv, out: Pick<DepartmentResult, 'resolve'>): Target | undefined {
  const ps = d.parent_source_id;
  if (!ps) return env.index.syncRootId;
  return out.resolve.get(ps) ?? (env.index.desiredById.has(ps) ? undefined : env.index.byThird.get(ps)?.id);
}

/** The first row of the table that matches a desired department (see index.ts); reads what is taken so far. */
export function classifyDepartment(d: DesiredDepartment, env: DepartmentEnv, out: Pick<DepartmentResult, 'resolve' | 'taken'>): DepartmentRow {
  const parent = parentTarget(d, env, out);
  if (parent === undefined) return rowOf('unresolved_parent', d, '');
  const existing = env.index.byThird.get(d.source_id);
  if (existing && existing.depth > 0) {
    const own = departmentOwnership(existing, env.ctx.syncId);
    const crashed = env.ctx.pending.departments?.has(d.source_id) === true && own === 'unmanaged';
    if (own === 'owned') return rowOf('update_owned', d, parent, existing, own);
    if (own === 'unmanaged' && (env.adoptBy.includes('third_id') || crashed)) return rowOf('adopt_by_third_id', d, parent, existing, own, crashed ? 'crashed_create' : 'third_id');
    return rowOf('conflict', d, parent, existing, own);
  }
  const candidate = env.adoptBy.includes('name') && !parent.startsWith('@') ? nameCandidate(d, parent, env, out) : undefined;
  return candidate ? rowOf('adopt_by_name', d, parent, candidate, 'unmanaged', 'name') : rowOf('create', d, parent);
}

function rowOf(row: DepartmentRowName, desired: DesiredDepartment, parent: Target, live?: PlatformDepartment, own?: DepartmentRow['own'], by?: DepartmentRow['by']): DepartmentRow {
  return { row, desired, parent, live, own, by };
}

/** An unowned live department of the same name under the same parent that no other desired department claims. */
function nameCandidate(d: DesiredDepartment, parent: Target, env: DepartmentEnv, out: Pick<DepartmentResult, 'taken'>): PlatformDepartment | undefined {
  return (env.index.childrenByName.get(nameKey(parent, d.name)) ?? []).find(
    (c) => !out.taken.has(c.id) && departmentOwnership(c, env.ctx.syncId) === 'unmanaged' && (c.third_department_id === '' || !env.index.desiredById.has(c.third_department_id)),
  );
}

/** The parent is neither in the source nor on the platform (or was skipped): skipped, with a warning. */
export function unresolvedParent({ desired: d }: DepartmentRow, _env: DepartmentEnv, out: DepartmentResult): void {
  const sid = d.source_id;
  const ps = d.parent_source_id!;
  out.skipped.add(sid);
  out.warnings.push({
    code: 'unresolved_parent',
    entity: 'departments',
    thirdId: sid,
    message: `department ${sid} ("${d.name}"): parent ${ps} ${out.skipped.has(ps) ? 'was skipped' : 'is neither in the source nor on the platform'}; skipped`,
  });
}

/** Same third id, owned: update the fields that differ (name, sort_order), and move it when its parent changed. */
export function updateOwned({ desired: d, parent, live }: DepartmentRow, env: DepartmentEnv, out: DepartmentResult): void {
  const existing = claim(d, live!, out);
  const { fields, before } = differing(d, existing);
  const what = Object.keys(fields);
  if (what.length > 0) {
    out.upserts.push({
      id: `departments:update:${d.source_id}`,
      entity: 'departments',
      op: 'update',
      thirdId: d.source_id,
      platformId: existing.id,
      description: fields.name !== undefined ? `rename department "${existing.path}" to "${normText(d.name)}"` : `update department "${existing.path}" (${what.join(', ')})`,
      reason: `${what.join(', ')} differ${what.length === 1 ? 's' : ''} from the source`,
      fields,
      before,
      request: { method: 'PATCH', path: `/org/departments/${encodeURIComponent(existing.id)}`, body: fields },
      dependsOn: NO_DEPS,
    });
  }
  moveIfReparented(d, existing, parent, undefined, env, out);
}

/** Same third id, unmanaged, sync.adopt.departments [third_id] or this sync's crashed create: adopt (+ move). */
export function adoptByThirdId({ desired: d, parent, live, by }: DepartmentRow, env: DepartmentEnv, out: DepartmentResult): void {
  const existing = claim(d, live!, out);
  const { fields, before } = differing(d, existing);
  fields.metadata = { ...metadataValue(existing.metadata), [MANAGED_BY_KEY]: env.ctx.syncId };
  const adoptId = `departments:adopt:${d.source_id}`;
  out.upserts.push({
    id: adoptId,
    entity: 'departments',
    op: 'adopt',
    thirdId: d.source_id,
    platformId: existing.id,
    description: `adopt department "${existing.path}" (matched by ${by!.replace('_', ' ')})`,
    reason: by === 'crashed_create' ? 'created by this sync in a run that stopped before recording it' : 'sync.adopt.departments matches by third_id',
    fields,
    before,
    request: { method: 'PATCH', path: `/org/departments/${encodeURIComponent(existing.id)}`, body: fields },
    dependsOn: NO_DEPS,
    adoptedBy: by!,
  });
  moveIfReparented(d, existing, parent, adoptId, env, out);
}

/** Same third id, another sync's or unmanaged without adoption: blocked, left alone (its children still hang there). */
export function sameIdConflict({ desired: d, live, own }: DepartmentRow, _env: DepartmentEnv, out: DepartmentResult): void {
  const existing = claim(d, live!, out);
  out.warnings.push({
    code: 'not_owned_conflict',
    entity: 'departments',
    thirdId: d.source_id,
    platformId: existing.id,
    blocks: 'not_owned_conflict',
    message: `department "${existing.path}" with third_department_id ${d.source_id} exists but is ${own === 'other_sync' ? 'managed by another sync' : 'not owned by this sync (enable sync.adopt.departments: [third_id] to take it over)'}; left alone`,
  });
}

/** No live department with its third id, an unowned one of the same name under the same parent, adopt by name: adopt. */
export function adoptByName({ desired: d, live }: DepartmentRow, env: DepartmentEnv, out: DepartmentResult): void {
  const candidate = claim(d, live!, out);
  const { fields, before } = differing(d, candidate);
  fields.third_department_id = d.source_id;
  before.third_department_id = candidate.third_department_id;
  fields.metadata = { ...metadataValue(candidate.metadata), [MANAGED_BY_KEY]: env.ctx.syncId };
  out.upserts.push({
    id: `departments:adopt:${d.source_id}`,
    entity: 'departments',
    op: 'adopt',
    thirdId: d.source_id,
    platformId: candidate.id,
    description: `adopt department "${candidate.path}" (matched by name under the same parent)`,
    reason: 'sync.adopt.departments matches by name',
    fields,
    before,
    request: { method: 'PATCH', path: `/org/departments/${encodeURIComponent(candidate.id)}`, body: fields },
    dependsOn: NO_DEPS,
    adoptedBy: 'name',
  });
}

/** A live department matched to a desired one: taken, and the source id resolves to it. */
function claim(d: DesiredDepartment, live: PlatformDepartment, out: DepartmentResult): PlatformDepartment {
  out.taken.add(live.id);
  out.resolve.set(d.source_id, live.id);
  return live;
}

/** A move when the live parent is not the desired one (after the adoption, when there is one). */
function moveIfReparented(d: DesiredDepartment, existing: PlatformDepartment, parent: Target, adoptId: string | undefined, env: DepartmentEnv, out: DepartmentResult): void {
  const current = env.index.parentOf.get(existing.id) ?? env.index.root.id;
  if (current === parent) return;
  out.moves.push({
    deptId: existing.id,
    thirdId: d.source_id,
    name: existing.name,
    from: current,
    to: parent,
    toLabel: env.label(parent),
    dependsOn: adoptId === undefined ? depsOf(parent) : [adoptId, ...depsOf(parent)],
  });
}

/** The owned fields that differ: name, sort_order. */
export function differing(d: DesiredDepartment, p: PlatformDepartment): { fields: Record<string, PlanValue>; before: Record<string, PlanValue> } {
  const fields: Record<string, PlanValue> = {};
  const before: Record<string, PlanValue> = {};
  if (normText(d.name) !== normText(p.name)) {
    fields.name = normText(d.name);
    before.name = p.name;
  }
  if (d.sort_order !== undefined && d.sort_order !== p.sort_order) {
    fields.sort_order = d.sort_order;
    before.sort_order = p.sort_order;
  }
  return { fields, before };
}
