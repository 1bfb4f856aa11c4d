/**
 * Checks across departments after the merge: parents that do not exist, cycles; and dependants follow a quarantined
 * department with their own reason. The members' checks are settle-members.ts.
 */
import type { DesiredDepartment, QuarantineEntry } from '../domain/desired.js';

function entry(entity: QuarantineEntry['entity'], rec: { source_id: string; origin?: { source: string; location: string } }, reason: string, message: string): QuarantineEntry {
  return { source: rec.origin?.source ?? '', entity, source_id: rec.source_id, location: rec.origin?.location ?? '', reason, message };
}

/**
 * Validates the department tree. `known` are ids of departments quarantined earlier (their children follow them).
 * Returns the departments that pass, parents before children.
 */
export function validateDepartments(departments: DesiredDepartment[], quarantinedIds: Set<string>, quarantine: QuarantineEntry[]): DesiredDepartment[] {
  const byId = new Map(departments.map((d) => [d.source_id, d]));
  const bad = new Map<string, true>();
  // Unknown parents and self-parents.
  for (const d of departments) {
    const p = d.parent_source_id;
    if (p === undefined) continue;
    if (p === d.source_id) {
      quarantine.push(entry('departments', d, 'cycle', `department "${d.source_id}" is its own parent`));
      bad.set(d.source_id, true);
    } else if (!byId.has(p) && !quarantinedIds.has(p)) {
      quarantine.push(entry('departments', d, 'unknown_parent', `parent department "${p}" does not exist`));
      bad.set(d.source_id, true);
    }
  }
  // Cycles: walk up from each department; a walk that comes back to a department on its own path is a cycle.
  const state = new Map<string, 1 | 2>(); // 1 = on the current path, 2 = done
  for (const start of departments) {
    if (state.has(start.source_id)) continue;
    const path: string[] = [];
    let cur: DesiredDepartment | undefined = start;
    while (cur && !state.has(cur.source_id) && !bad.has(cur.source_id)) {
      state.set(cur.source_id, 1);
      path.push(cur.source_id);
      cur = cur.parent_source_id !== undefined ? byId.get(cur.parent_source_id) : undefined;
    }
    if (cur && state.get(cur.source_id) === 1) {
      const ring = path.slice(path.indexOf(cur.source_id));
      const text = [...ring, cur.source_id].map((id) => `"${id}"`).join(' -> ');
      for (const id of ring) {
        quarantine.push(entry('departments', byId.get(id)!, 'cycle', `the department hierarchy has a cycle: ${text}`));
        bad.set(id, true);
      }
    }
    for (const id of path) state.set(id, 2);
  }
  // Dependants: children of quarantined departments, to any depth; emit parents before children.
  const out: DesiredDepartment[] = [];
  const placed = new Set<string>();
  const children = new Map<string, DesiredDepartment[]>();
  const roots: DesiredDepartment[] = [];
  for (const d of departments) {
    if (bad.has(d.source_id)) continue;
    if (d.parent_source_id === undefined) roots.push(d);
    else {
      const list = children.get(d.parent_source_id) ?? [];
      list.push(d);
      children.set(d.parent_source_id, list);
    }
  }
  const stack = [...roots].reverse();
  while (stack.length) {
    const d = stack.pop()!;
    out.push(d);
    placed.add(d.source_id);
    const kids = children.get(d.source_id);
    if (kids) for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
  for (const d of departments) {
    if (bad.has(d.source_id) || placed.has(d.source_id)) continue;
    // Not reachable from a top-level department: some ancestor is quarantined.
    let p = d.parent_source_id!;
    while (byId.has(p) && !bad.has(p) && !quarantinedIds.has(p) && byId.get(p)!.parent_source_id !== undefined) p = byId.get(p)!.parent_source_id!;
    const direct = d.parent_source_id!;
    quarantine.push(entry('departments', d, 'parent_quarantined', direct === p ? `parent department "${direct}" is quarantined` : `parent department "${direct}" is quarantined (its ancestor "${p}" is)`));
  }
  return out;
}
