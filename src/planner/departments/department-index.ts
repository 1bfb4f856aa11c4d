/** The index step of the department table: the live tree, the sync root, and the desired departments parents first. */
import { OrgsyncError } from '../../shared/errors.js';
import type { DesiredDepartment, PlanWarning, PlatformDepartment } from '../../domain/index.js';
import type { Target } from '../context.js';
import { normText } from '../normalise.js';
import { departmentOwnership } from '../ownership.js';
import type { DepartmentIndex, DepartmentResult } from './types.js';

/** Finds the tenant root (depth 0). */
export function findTenantRoot(live: readonly PlatformDepartment[]): PlatformDepartment | undefined {
  return live.find((d) => d.depth === 0 && d.status === 'active');
}

/** Indexes the live tree, resolves sync.root_department and orders the desired departments (cycles warned about). */
export function buildDepartmentIndex(desired: readonly DesiredDepartment[], all: readonly PlatformDepartment[], syncId: string, rootDepartment: string | undefined, warnings: PlanWarning[]): DepartmentIndex {
  const live = all.filter((d) => d.status === 'active');
  const root = findTenantRoot(live);
  if (!root) throw new OrgsyncError('STATE_ERROR', 'the mirror holds no root department (depth 0); refresh the mirror');
  const byId = new Map<string, PlatformDepartment>();
  const byThird = new Map<string, PlatformDepartment>();
  const parentOf = new Map<string, string>();
  const childrenByName = new Map<string, PlatformDepartment[]>();
  let ownedCount = 0;
  for (const d of live) {
    byId.set(d.id, d);
    if (d.third_department_id !== '') byThird.set(d.third_department_id, d);
    if (d.depth > 0) {
      const parent = d.parent_id === '' ? root.id : d.parent_id;
      parentOf.set(d.id, parent);
      const k = nameKey(parent, d.name);
      const list = childrenByName.get(k);
      if (list) list.push(d);
      else childrenByName.set(k, [d]);
    }
    if (departmentOwnership(d, syncId) === 'owned') ownedCount += 1;
  }
  let syncRootId = root.id;
  if (rootDepartment !== undefined) {
    const r = byId.get(rootDepartment) ?? byThird.get(rootDepartment);
    if (!r) throw new OrgsyncError('CONFIG_INVALID', `sync.root_department: no department has the id or third_department_id "${rootDepartment}"`);
    syncRootId = r.id;
  }
  const desiredById = new Map<string, DesiredDepartment>();
  for (const d of desired) desiredById.set(d.source_id, d);
  const ordered = parentsFirst(desired, desiredById, warnings);
  return { live, root, syncRootId, byId, byThird, parentOf, childrenByName, ownedCount, desiredById, ordered };
}

/** The key of childrenByName: a parent id and a normalised name. */
export function nameKey(parent: string, name: string): string {
  return `${parent}\u0000${normText(name)}`;
}

/** Topological order (parents first); a cycle in the source is reported, its members skipped. */
export function parentsFirst(desired: readonly DesiredDepartment[], desiredById: ReadonlyMap<string, DesiredDepartment>, warnings: PlanWarning[]): DesiredDepartment[] {
  const ordered: DesiredDepartment[] = [];
  const state = new Map<string, 1 | 2>();
  for (const start of desired) {
    if (state.has(start.source_id)) continue;
    const stack: { d: DesiredDepartment; expanded: boolean }[] = [{ d: start, expanded: false }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const id = top.d.source_id;
      if (top.expanded) {
        stack.pop();
        if (state.get(id) !== 2) {
          state.set(id, 2);
          ordered.push(top.d);
        }
        continue;
      }
      top.expanded = true;
      state.set(id, 1);
      const p = top.d.parent_source_id;
      if (p && desiredById.has(p)) {
        const ps = state.get(p);
        if (ps === undefined) stack.push({ d: desiredById.get(p)!, expanded: false });
        else if (ps === 1) {
          warnings.push({ code: 'source_cycle', entity: 'departments', thirdId: id, message: `department ${id}: its parent chain in the source loops back to itself; skipped` });
          state.set(id, 2);
          stack.pop();
        }
      }
    }
  }
  return ordered;
}

/** The path (`/Acme/Sales`) of a department target: a live department, or one created in this run ('' = the root). */
export function departmentLabel(index: Pick<DepartmentIndex, 'byId' | 'root'>, out: Pick<DepartmentResult, 'newPaths'>): (t: Target) => string {
  return (t) => {
    if (t === '') return index.byId.get(index.root.id)?.path ?? '/';
    const d = index.byId.get(t);
    return d ? d.path : (out.newPaths.get(t) ?? t);
  };
}
