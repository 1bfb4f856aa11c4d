/**
 * The order of a plan, defined in code (tests: test/planner/order.test.ts):
 *   1. position creates, adoptions and updates
 *   2. department creates, top-down (a child's create depends on its parent's)
 *   3. department adoptions and updates (name, sort_order)
 *   4. department moves, ordered so that no intermediate tree has a cycle
 *   5. member creates, adoptions and updates (each depends on the create of its department, when new)
 *   6. member removals
 *   7. department deletes, bottom-up (each depends on its children's deletes, the moves out of it and the member
 *      changes that empty it); a department that would still hold records orgsync keeps or does not own is not deleted
 *   8. position deletes, last
 * The applier runs independent changes in parallel; `dependsOn` is what it waits for, the list order is a valid
 * sequential order.
 */
import type { Change, PlanWarning, PlatformDepartment } from '../domain/index.js';
import { type Target, NO_DEPS, targetValue } from './context.js';
import type { DepartmentMove } from './departments/index.js';

/** The tree the moves are simulated on. */
export interface MoveTree {
  tenantRootId: string;
  /** Live departments: id -> parent id. */
  parentOf: ReadonlyMap<string, string>;
  /** New departments: `@<change id>` -> parent target. */
  newParentOf: ReadonlyMap<string, Target>;
  /** The path of a department target, for text renderings; absent: no paths. */
  labelOf?: (t: Target) => string;
}

/**
 * Orders department moves so that no intermediate tree has a cycle: a move is made only once its target is not
 * inside the moving department's subtree (against the tree as the earlier moves left it). When no move can be made
 * (possible only when the source tree closes a loop through departments orgsync does not manage), one department
 * is moved to the tenant root with parent_id "" and its own move is dropped with a warning: always terminates.
 * Moves are chained (each waits for the previous one) because each is checked against the tree the previous left.
 */
export function orderMoves(moves: readonly DepartmentMove[], tree: MoveTree, warnings: PlanWarning[]): Change[] {
  const parent = new Map<string, string>(tree.parentOf);
  for (const [k, v] of tree.newParentOf) parent.set(k, v);
  const isInside = (node: string, ancestor: string): boolean => {
    let cur: string | undefined = node;
    for (let steps = 0; cur !== undefined && steps <= parent.size + 1; steps += 1) {
      if (cur === ancestor) return true;
      if (cur === tree.tenantRootId) return false;
      cur = parent.get(cur);
    }
    return false;
  };
  const remaining = [...moves].sort((a, b) => (a.thirdId < b.thirdId ? -1 : a.thirdId > b.thirdId ? 1 : 0));
  const out: Change[] = [];
  let previous: string | undefined;
  const emit = (m: DepartmentMove, to: Target, id: string, description: string, reason: string, extraDeps: string[]): void => {
    const fields = { parent_id: to === tree.tenantRootId ? '' : targetValue(to) };
    const deps = [...extraDeps];
    if (previous !== undefined && !deps.includes(previous)) deps.push(previous);
    out.push({
      id,
      entity: 'departments',
      op: 'move',
      thirdId: m.thirdId,
      platformId: m.deptId,
      description,
      reason,
      fields,
      before: { parent_id: parent.get(m.deptId) ?? '' },
      ...(tree.labelOf ? { paths: { parent_id: { before: tree.labelOf(parent.get(m.deptId) ?? tree.tenantRootId), after: tree.labelOf(to) } } } : {}),
      request: { method: 'PATCH', path: `/org/departments/${encodeURIComponent(m.deptId)}`, body: fields },
      dependsOn: deps.length === 0 ? NO_DEPS : deps,
    });
    parent.set(m.deptId, to);
    previous = id;
  };
  while (remaining.length > 0) {
    const i = remaining.findIndex((m) => !isInside(m.to, m.deptId));
    if (i >= 0) {
      const m = remaining.splice(i, 1)[0]!;
      emit(m, m.to, `departments:move:${m.thirdId}`, `move department "${m.name}" under "${m.toLabel}"`, 'parent differs from the source', m.dependsOn);
      continue;
    }
    const m = remaining.shift()!;
    emit(m, tree.tenantRootId, `departments:move:${m.thirdId}:root`, `move department "${m.name}" to the root to break a cycle`, 'its target lies inside its own subtree', m.dependsOn);
    warnings.push({
      code: 'move_cycle',
      entity: 'departments',
      thirdId: m.thirdId,
      platformId: m.deptId,
      message: `department "${m.name}" cannot move under "${m.toLabel}": that department lies inside its subtree through departments orgsync does not manage; moved to the root instead`,
    });
  }
  return out;
}

/** What decides whether an owned department gone from the source can be deleted. */
export interface DeleteInput {
  candidates: readonly PlatformDepartment[];
  parentOf: ReadonlyMap<string, string>;
  byId: ReadonlyMap<string, PlatformDepartment>;
  /** Ordered move changes (their `platformId` is the moving department). */
  moves: readonly Change[];
  /** Department id -> change ids that take members out of it. */
  leaving: ReadonlyMap<string, string[]>;
  /** Department id -> members that stay in it. */
  staying: ReadonlyMap<string, string[]>;
}

/**
 * Department deletes, bottom-up: a department is deleted only if, once the earlier changes ran, it has no children
 * and no members; otherwise it is kept with a `kept_not_empty` warning naming what stays (and so are its ancestors).
 */
export function orderDepartmentDeletes(input: DeleteInput, warnings: PlanWarning[]): Change[] {
  const candidateIds = new Set(input.candidates.map((d) => d.id));
  const children = new Map<string, string[]>();
  for (const [child, p] of input.parentOf) {
    const list = children.get(p);
    if (list) list.push(child);
    else children.set(p, [child]);
  }
  const movesFrom = new Map<string, string[]>();
  const moved = new Set<string>();
  for (const m of input.moves) {
    if (!m.platformId) continue;
    const from = input.parentOf.get(m.platformId);
    if (from !== undefined) {
      const list = movesFrom.get(from);
      if (list) list.push(m.id);
      else movesFrom.set(from, [m.id]);
    }
    // A department is out of its old parent after its last move (moves are chained, so the last one wins).
    moved.add(m.platformId);
  }
  const kept = new Set<string>();
  const sorted = [...input.candidates].sort((a, b) => b.depth - a.depth || (a.path < b.path ? -1 : 1));
  const out: Change[] = [];
  for (const d of sorted) {
    const blockers: string[] = [];
    for (const c of children.get(d.id) ?? []) {
      if (moved.has(c)) continue;
      if (candidateIds.has(c) && !kept.has(c)) continue;
      const cd = input.byId.get(c);
      blockers.push(`department "${cd?.path ?? c}"`);
    }
    for (const member of input.staying.get(d.id) ?? []) blockers.push(member);
    if (blockers.length > 0) {
      kept.add(d.id);
      warnings.push({
        code: 'kept_not_empty',
        entity: 'departments',
        thirdId: d.third_department_id,
        platformId: d.id,
        message: `department "${d.path}" is gone from the source but is not deleted: ${blockers.slice(0, 5).join(', ')}${blockers.length > 5 ? ` and ${blockers.length - 5} more` : ''} would remain in it`,
      });
      continue;
    }
    const deps = [
      ...(children.get(d.id) ?? []).filter((c) => candidateIds.has(c) && !moved.has(c)).map((c) => `departments:remove:${input.byId.get(c)?.third_department_id || c}`),
      ...(movesFrom.get(d.id) ?? []),
      ...(input.leaving.get(d.id) ?? []),
    ];
    out.push({
      id: `departments:remove:${d.third_department_id || d.id}`,
      entity: 'departments',
      op: 'remove',
      thirdId: d.third_department_id,
      platformId: d.id,
      description: `delete department "${d.path}"`,
      reason: 'gone from the source',
      fields: {},
      request: { method: 'DELETE', path: `/org/departments/${encodeURIComponent(d.id)}` },
      dependsOn: deps.length === 0 ? NO_DEPS : deps,
    });
  }
  return out;
}
