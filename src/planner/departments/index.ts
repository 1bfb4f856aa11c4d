/**
 * Departments: desired x mirror x ownership -> create / adopt / update / move / removal candidates, as a decision
 * table. "Owned" = metadata.managed_by is this sync.id. Preparation (department-index.ts): the live tree is indexed,
 * the sync root resolved (sync.root_department or the tenant root; an unknown one is a config error) and the desired
 * departments put parents first (a cycle in the source: warning source_cycle, its members skipped). Then each desired
 * department, parents first, goes to the first row that matches (present-rows.ts, create-rows.ts). First match wins.
 *
 * | row                 | desired                | mirror (live)                                 | ownership                        | action                                          |
 * |---------------------|------------------------|-----------------------------------------------|----------------------------------|-------------------------------------------------|
 * | `unresolved_parent` | parent id unknown      | parent neither in the source nor on the platform, or skipped | -                 | warning unresolved_parent; skipped (its children too) |
 * | `update_owned`      | present                | same third id                                 | owned                            | update name / sort_order that differ; move when the parent differs |
 * | `adopt_by_third_id` | present                | same third id                                 | unmanaged + adopt [third_id], or pending create | adopt (sets managed_by) + patch; move after it |
 * | `conflict`          | present                | same third id                                 | other sync, or unmanaged         | warning not_owned_conflict (blocked); left alone |
 * | `adopt_by_name`     | present, live parent   | no third id match; same name under the same parent | unmanaged + adopt [name]    | adopt: set third id + managed_by                |
 * | `create`            | present                | none                                          | -                                | create under the parent's target; warning department_name_taken when a department of that name under that parent is another sync's or nobody's |
 *
 * Absent from the source (create-rows.ts `removalCandidates`, when a source provides departments):
 *
 * | desired     | mirror (live)                                   | ownership | action                                             |
 * |-------------|-------------------------------------------------|-----------|----------------------------------------------------|
 * | quarantined | live                                            | owned     | kept; warning quarantined_kept                     |
 * | absent      | live, not the tenant root, not the sync root     | owned     | removal candidate (order.ts: deleted only if it ends up empty) |
 * | absent      | live                                            | not owned | nothing                                            |
 */
import type { DesiredDepartment, PlatformDepartment } from '../../domain/index.js';
import type { DiffContext } from '../context.js';
import { buildDepartmentIndex, departmentLabel } from './department-index.js';
import { createDepartment, removalCandidates } from './create-rows.js';
import { adoptByName, adoptByThirdId, classifyDepartment, sameIdConflict, unresolvedParent, updateOwned } from './present-rows.js';
import { type DepartmentDiff, type DepartmentEnv, type DepartmentResult, type DepartmentRow, type DepartmentRowName, newDepartmentResult } from './types.js';

export type { DepartmentDiff, DepartmentMove } from './types.js';
export { findTenantRoot } from './department-index.js';
export { DEPARTMENT_NAME_TAKEN } from './create-rows.js';

/** One handler per row of the table for a department in the source. */
export const DEPARTMENT_ROWS: Record<DepartmentRowName, (row: DepartmentRow, env: DepartmentEnv, out: DepartmentResult) => void> = {
  unresolved_parent: unresolvedParent,
  update_owned: updateOwned,
  adopt_by_third_id: adoptByThirdId,
  conflict: sameIdConflict,
  adopt_by_name: adoptByName,
  create: createDepartment,
};

/** Diffs desired departments against the mirror: the index, then each department (parents first) through the table. */
export function diffDepartments(desired: readonly DesiredDepartment[], all: readonly PlatformDepartment[], provided: boolean, ctx: DiffContext): DepartmentDiff {
  const index = buildDepartmentIndex(desired, all, ctx.syncId, ctx.opts.rootDepartment, ctx.warnings);
  const out = newDepartmentResult(ctx.warnings);
  const env: DepartmentEnv = { ctx, index, adoptBy: ctx.opts.adopt.departments, label: departmentLabel(index, out) };
  for (const d of index.ordered) {
    const row = classifyDepartment(d, env, out);
    DEPARTMENT_ROWS[row.row](row, env, out);
  }
  return {
    creates: out.creates,
    upserts: out.upserts,
    moves: out.moves,
    removalCandidates: provided ? removalCandidates(index, env, out) : [],
    resolve: out.resolve,
    tenantRootId: index.root.id,
    syncRootId: index.syncRootId,
    parentOf: index.parentOf,
    newParentOf: out.newParentOf,
    labelOf: env.label,
    byId: index.byId,
    byThird: index.byThird,
    ownedCount: index.ownedCount,
  };
}
