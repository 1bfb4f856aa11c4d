/** The values of the department decision table: the index, the result, and what every row handler reads. */
import type { Change, DesiredDepartment, PlanWarning, PlatformDepartment } from '../../domain/index.js';
import type { DiffContext, Target } from '../context.js';
import type { Ownership } from '../ownership.js';

/** A department whose parent must change; order.ts turns moves into ordered changes. */
export interface DepartmentMove {
  deptId: string;
  thirdId: string;
  name: string;
  /** Current parent (platform id; the tenant root's id for a top-level department). */
  from: string;
  to: Target;
  toLabel: string;
  /** Changes the move needs first (the target's create, the department's adoption). */
  dependsOn: string[];
}

/** The department part of a plan, before removals are settled against the members. */
export interface DepartmentDiff {
  /** Creates, top-down (a parent's create always comes before its children's). */
  creates: Change[];
  /** Adoptions and field updates (name, sort_order). */
  upserts: Change[];
  moves: DepartmentMove[];
  /** Owned live departments gone from the source, not yet checked for what would stay in them. */
  removalCandidates: PlatformDepartment[];
  /** Source id -> platform id or `@<create change id>`, for children and members. */
  resolve: Map<string, Target>;
  tenantRootId: string;
  /** Where top-level source departments hang (sync.root_department or the tenant root). */
  syncRootId: string;
  /** Live tree: department id -> parent id (the tenant root's id for top-level ones). */
  parentOf: Map<string, string>;
  /** New departments: `@<change id>` -> parent target. */
  newParentOf: Map<string, Target>;
  /** The path (`/Acme/Sales`) of a department target: a live department, or one created in this run. */
  labelOf: (t: Target) => string;
  byId: Map<string, PlatformDepartment>;
  byThird: Map<string, PlatformDepartment>;
  ownedCount: number;
}

/** The live tree and the desired departments side by side: the mirror and the ownership side of the table. */
export interface DepartmentIndex {
  /** Live (active) departments, in mirror order. */
  live: PlatformDepartment[];
  root: PlatformDepartment;
  /** Where top-level source departments hang (sync.root_department or the tenant root). */
  syncRootId: string;
  byId: Map<string, PlatformDepartment>;
  byThird: Map<string, PlatformDepartment>;
  /** Live tree: department id -> parent id (the tenant root's id for top-level ones). */
  parentOf: Map<string, string>;
  /** `<parent id>\0<normalised name>` -> the live departments of that name under that parent. */
  childrenByName: Map<string, PlatformDepartment[]>;
  ownedCount: number;
  desiredById: Map<string, DesiredDepartment>;
  /** The desired departments, parents first (a cycle's members are left out, with a warning). */
  ordered: DesiredDepartment[];
}

/** What the row handlers of one department diff write. */
export interface DepartmentResult {
  creates: Change[];
  upserts: Change[];
  moves: DepartmentMove[];
  /** Warnings in the order they arise (the plan's own list when composed). */
  warnings: PlanWarning[];
  /** Source id -> platform id or `@<create change id>`. */
  resolve: Map<string, Target>;
  /** New departments: `@<change id>` -> parent target. */
  newParentOf: Map<string, Target>;
  /** Paths of the departments created in this run, by their `@<change id>` target. */
  newPaths: Map<string, string>;
  /** Live departments a desired department claimed (by third id or name). */
  taken: Set<string>;
  /** Source ids skipped (unresolved parent), so that their children say why. */
  skipped: Set<string>;
}

/** A fresh result that writes its warnings into `warnings`. */
export function newDepartmentResult(warnings: PlanWarning[]): DepartmentResult {
  return { creates: [], upserts: [], moves: [], warnings, resolve: new Map(), newParentOf: new Map(), newPaths: new Map(), taken: new Set(), skipped: new Set() };
}

/** What every department row handler reads. */
export interface DepartmentEnv {
  ctx: DiffContext;
  index: DepartmentIndex;
  /** sync.adopt.departments. */
  adoptBy: readonly string[];
  /** The path of a department target (departmentLabel over the index and this result's new paths). */
  label: (t: Target) => string;
}

/** The rows of the table for a department in the source, in the order they are tried. */
export type DepartmentRowName = 'unresolved_parent' | 'update_owned' | 'adopt_by_third_id' | 'conflict' | 'adopt_by_name' | 'create';

/** One row of the table for a desired department: the rule that matched, its parent, and the record it matched. */
export interface DepartmentRow {
  row: DepartmentRowName;
  desired: DesiredDepartment;
  /** Where it hangs (platform id or `@<create change id>`); '' when the parent is unresolved. */
  parent: Target;
  /** The live department matched by third id or name. */
  live: PlatformDepartment | undefined;
  /** Its ownership (matched by third id). */
  own: Ownership | undefined;
  /** How an adoption matched. */
  by: 'third_id' | 'crashed_create' | 'name' | undefined;
}
