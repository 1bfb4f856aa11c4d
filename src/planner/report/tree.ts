/**
 * The department tree of a plan report: the departments as the mirror saw them, with the plan's department changes
 * applied (creates hung under their parents, moves re-parented) and each node marked with what happens to it and how
 * many of its members change. Pure: built from the Plan and the context it was made in.
 */
import type { Change, Plan, PlanValue } from '../../domain/index.js';
import { isPlanRef } from '../../domain/index.js';

/** A department as the report needs it (the mirror's PlatformDepartment fits). */
export interface ReportDepartment {
  id: string;
  /** Empty for the tenant root. */
  parent_id: string;
  name: string;
  status?: string;
}

/** What happens to one department. */
export type TreeMark = 'created' | 'adopted' | 'renamed' | 'updated' | 'moved' | 'removed';

/** One node of the tree. */
export interface TreeNode {
  /** The platform id, or the id of the change that creates it. */
  id: string;
  name: string;
  marks: TreeMark[];
  /** Renamed: the old name. */
  renamedFrom?: string;
  /** Moved: the old and the new parent's path. */
  movedFrom?: string;
  movedTo?: string;
  /** Member changes of members in (or moving into) this department, by operation. */
  members: { create: number; update: number; suspend: number; remove: number };
  children: TreeNode[];
}

/** The id a plan value refers to: a platform id, or the id of the create a PlanRef names. */
function refId(v: PlanValue | undefined): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (isPlanRef(v)) return v.ref;
  return typeof v === 'string' ? v : undefined;
}

/** A member change's kind for the report: suspensions are removals done by PATCH status suspended. */
export function memberChangeKind(c: Change): 'create' | 'update' | 'suspend' | 'remove' {
  if (c.op === 'create') return 'create';
  if (c.op === 'remove') return c.request?.method === 'DELETE' ? 'remove' : 'suspend';
  if (c.fields.status === 'suspended') return 'suspend';
  return 'update';
}

/**
 * Builds the tree. `departments`: the live departments when the plan was made (absent: only the changed departments
 * are shown, hung under the tenant root). `memberDepartments`: account_id -> department id of members the plan
 * suspends or removes (their changes carry no department).
 */
export function buildDepartmentTree(plan: Pick<Plan, 'changes'>, departments: readonly ReportDepartment[] = [], memberDepartments: Readonly<Record<string, string>> = {}): TreeNode[] {
  const counts = new MemberChangeCounts(memberDepartments);
  for (const c of plan.changes) if (c.entity === 'members') counts.add(c);
  return departmentTreeOf(plan.changes, counts, departments);
}

/** A department's member changes by kind. */
export type MemberCounts = TreeNode['members'];

/**
 * The member changes of a plan counted per department (the one a member is in or moves into), change by change: what
 * the tree needs of a million member changes, kept in one entry per department.
 */
export class MemberChangeCounts {
  readonly byDepartment = new Map<string, MemberCounts>();

  constructor(private readonly memberDepartments: Readonly<Record<string, string>> = {}) {}

  /** Counts one member change. */
  add(c: Change): void {
    const dept = refId(c.fields.department_id) || refId(c.before?.department_id) || (c.platformId ? this.memberDepartments[c.platformId] : undefined);
    if (!dept) return;
    let counts = this.byDepartment.get(dept);
    if (!counts) this.byDepartment.set(dept, (counts = { create: 0, update: 0, suspend: 0, remove: 0 }));
    counts[memberChangeKind(c)] += 1;
  }
}

/**
 * The tree of `departments` with the department changes among `changes` applied (the others are passed over) and
 * the member changes `counts` counted.
 */
export function departmentTreeOf(changes: Iterable<Change>, counts: MemberChangeCounts, departments: readonly ReportDepartment[] = []): TreeNode[] {
  interface Work {
    node: TreeNode;
    parentId: string;
  }
  const nodes = new Map<string, Work>();
  const blank = (id: string, name: string, parentId: string): Work => ({ node: { id, name, marks: [], members: { create: 0, update: 0, suspend: 0, remove: 0 }, children: [] }, parentId });
  let rootId: string | undefined;
  for (const d of departments) {
    if (d.status === 'deleted') continue;
    nodes.set(d.id, blank(d.id, d.name, d.parent_id));
    if (d.parent_id === '') rootId ??= d.id;
  }
  const parentOf = (v: PlanValue | undefined): string => {
    const id = refId(v);
    return id === undefined || id === '' ? (rootId ?? '') : id;
  };
  // "from" paths read the tree as it was (names and parents before the plan), "to" paths as it will be.
  const before = new Map([...nodes].map(([id, w]) => [id, { name: w.node.name, parentId: w.parentId }]));
  const path = (id: string, old = false): string => {
    const names: string[] = [];
    const seen = new Set<string>();
    const at = (k: string) => (old ? before.get(k) : nodes.get(k) && { name: nodes.get(k)!.node.name, parentId: nodes.get(k)!.parentId });
    for (let k = id, cur = at(k); cur && !seen.has(k); k = cur.parentId, cur = at(k)) {
      seen.add(k);
      names.unshift(cur.name);
    }
    return names.length > 0 ? names.join(' / ') : id || '(tenant root)';
  };
  const moved: { w: Work; to: string }[] = [];
  const get = (c: Change): Work => {
    const id = c.platformId ?? c.id;
    let w = nodes.get(id);
    if (!w) {
      w = blank(id, typeof c.fields.name === 'string' ? c.fields.name : c.thirdId || id, rootId ?? '');
      nodes.set(id, w);
    }
    return w;
  };
  for (const c of changes) {
    if (c.entity !== 'departments') continue;
    if (c.op === 'create') {
      const w = blank(c.id, typeof c.fields.name === 'string' ? c.fields.name : c.thirdId, parentOf(c.fields.parent_id));
      w.node.marks.push('created');
      nodes.set(c.id, w);
      continue;
    }
    const w = get(c);
    if (c.op === 'adopt') w.node.marks.push('adopted');
    else if (c.op === 'remove') w.node.marks.push('removed');
    else if (c.op === 'move') {
      const to = parentOf(c.fields.parent_id);
      w.node.marks.push('moved');
      w.node.movedFrom = path(refId(c.before?.parent_id) || (before.get(w.node.id)?.parentId ?? w.parentId), true);
      moved.push({ w, to });
      w.parentId = to;
    } else if (typeof c.fields.name === 'string') {
      w.node.marks.push('renamed');
      w.node.renamedFrom = typeof c.before?.name === 'string' ? c.before.name : w.node.name;
      w.node.name = c.fields.name;
    } else w.node.marks.push('updated');
  }
  for (const m of moved) m.w.node.movedTo = path(m.to);
  for (const [dept, n] of counts.byDepartment) {
    const w = nodes.get(dept);
    if (!w) continue;
    for (const k of ['create', 'update', 'suspend', 'remove'] as const) w.node.members[k] += n[k];
  }
  const roots: TreeNode[] = [];
  for (const w of nodes.values()) {
    const parent = w.parentId ? nodes.get(w.parentId) : undefined;
    if (parent && parent !== w) parent.node.children.push(w.node);
    else roots.push(w.node);
  }
  sortByName(roots);
  return roots;
}

/** Sorts a level of the tree and every level below it by name. */
function sortByName(list: TreeNode[]): void {
  list.sort((a, b) => a.name.localeCompare(b.name));
  for (const n of list) sortByName(n.children);
}

/** True when the node or a node below it changes (or has member changes). */
export function subtreeChanges(n: TreeNode): boolean {
  return n.marks.length > 0 || n.members.create + n.members.update + n.members.suspend + n.members.remove > 0 || n.children.some(subtreeChanges);
}
