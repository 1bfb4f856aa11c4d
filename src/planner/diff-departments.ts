/** Departments: desired x mirror x ownership -> create / adopt / update / move / removal candidates (see calculate-plan.ts). */
import { OrgsyncError } from '../shared/errors.js';
import type { Change, DesiredDepartment, PlanValue, PlatformDepartment } from '../domain/index.js';
import { type DiffContext, type Target, depsOf, keptBecauseQuarantined, metadataValue, NO_DEPS, refTarget, targetValue } from './context.js';
import { normText } from './normalise.js';
import { departmentOwnership, MANAGED_BY_KEY } from './ownership.js';

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

/** Finds the tenant root (depth 0). */
export function findTenantRoot(live: readonly PlatformDepartment[]): PlatformDepartment | undefined {
  return live.find((d) => d.depth === 0 && d.status === 'active');
}

/** Diffs desired departments against the mirror. */
export function diffDepartments(desired: readonly DesiredDepartment[], all: readonly PlatformDepartment[], provided: boolean, ctx: DiffContext): DepartmentDiff {
  const { syncId } = ctx;
  const adoptBy = ctx.opts.adopt?.departments ?? [];
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
      const k = `${parent}\u0000${normText(d.name)}`;
      const list = childrenByName.get(k);
      if (list) list.push(d);
      else childrenByName.set(k, [d]);
    }
    if (departmentOwnership(d, syncId) === 'owned') ownedCount += 1;
  }
  let syncRootId = root.id;
  if (ctx.opts.rootDepartment !== undefined) {
    const r = byId.get(ctx.opts.rootDepartment) ?? byThird.get(ctx.opts.rootDepartment);
    if (!r) throw new OrgsyncError('CONFIG_INVALID', `sync.root_department: no department has the id or third_department_id "${ctx.opts.rootDepartment}"`);
    syncRootId = r.id;
  }
  /** Paths of the departments created in this run, by their `@<change id>` target. */
  const newPaths = new Map<string, string>();
  const label = (t: Target): string => {
    if (t === '') return byId.get(root.id)?.path ?? '/';
    const d = byId.get(t);
    return d ? d.path : (newPaths.get(t) ?? t);
  };

  const desiredById = new Map<string, DesiredDepartment>();
  for (const d of desired) desiredById.set(d.source_id, d);

  // Topological order (parents first); a cycle in the source is reported, its members skipped.
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
          ctx.warnings.push({ code: 'source_cycle', entity: 'departments', thirdId: id, message: `department ${id}: its parent chain in the source loops back to itself; skipped` });
          state.set(id, 2);
          stack.pop();
        }
      }
    }
  }

  const resolve = new Map<string, Target>();
  const newParentOf = new Map<string, Target>();
  const creates: Change[] = [];
  const upserts: Change[] = [];
  const moves: DepartmentMove[] = [];
  const taken = new Set<string>();
  const skipped = new Set<string>();

  for (const d of ordered) {
    const sid = d.source_id;
    let parent: Target = syncRootId;
    const ps = d.parent_source_id;
    if (ps) {
      const resolved = resolve.get(ps) ?? (desiredById.has(ps) ? undefined : byThird.get(ps)?.id);
      if (resolved === undefined) {
        skipped.add(sid);
        ctx.warnings.push({
          code: 'unresolved_parent',
          entity: 'departments',
          thirdId: sid,
          message: `department ${sid} ("${d.name}"): parent ${ps} ${skipped.has(ps) ? 'was skipped' : 'is neither in the source nor on the platform'}; skipped`,
        });
        continue;
      }
      parent = resolved;
    }
    const name = normText(d.name);
    const existing = byThird.get(sid);
    if (existing && existing.depth > 0) {
      taken.add(existing.id);
      resolve.set(sid, existing.id);
      const own = departmentOwnership(existing, syncId);
      const crashed = ctx.pending.departments?.has(sid) === true && own === 'unmanaged';
      if (own === 'owned' || (own === 'unmanaged' && (adoptBy.includes('third_id') || crashed))) {
        const { fields, before } = differing(d, existing);
        let adoptId: string | undefined;
        if (own !== 'owned') {
          const by = crashed ? 'crashed_create' : 'third_id';
          fields.metadata = { ...metadataValue(existing.metadata), [MANAGED_BY_KEY]: syncId };
          adoptId = `departments:adopt:${sid}`;
          upserts.push({
            id: adoptId,
            entity: 'departments',
            op: 'adopt',
            thirdId: sid,
            platformId: existing.id,
            description: `adopt department "${existing.path}" (matched by ${by.replace('_', ' ')})`,
            reason: crashed ? 'created by this sync in a run that stopped before recording it' : 'sync.adopt.departments matches by third_id',
            fields,
            before,
            request: { method: 'PATCH', path: `/org/departments/${encodeURIComponent(existing.id)}`, body: fields },
            dependsOn: NO_DEPS,
            adoptedBy: by,
          });
        } else if (Object.keys(fields).length > 0) {
          const what = Object.keys(fields);
          upserts.push({
            id: `departments:update:${sid}`,
            entity: 'departments',
            op: 'update',
            thirdId: sid,
            platformId: existing.id,
            description: fields.name !== undefined ? `rename department "${existing.path}" to "${name}"` : `update department "${existing.path}" (${what.join(', ')})`,
            reason: `${what.join(', ')} differ${what.length === 1 ? 's' : ''} from the source`,
            fields,
            before,
            request: { method: 'PATCH', path: `/org/departments/${encodeURIComponent(existing.id)}`, body: fields },
            dependsOn: NO_DEPS,
          });
        }
        const current = parentOf.get(existing.id) ?? root.id;
        if (current !== parent) {
          moves.push({
            deptId: existing.id,
            thirdId: sid,
            name: existing.name,
            from: current,
            to: parent,
            toLabel: label(parent),
            dependsOn: adoptId === undefined ? depsOf(parent) : [adoptId, ...depsOf(parent)],
          });
        }
        continue;
      }
      ctx.warnings.push({
        code: 'not_owned_conflict',
        entity: 'departments',
        thirdId: sid,
        platformId: existing.id,
        blocks: 'not_owned_conflict',
        message: `department "${existing.path}" with third_department_id ${sid} exists but is ${own === 'other_sync' ? 'managed by another sync' : 'not owned by this sync (enable sync.adopt.departments: [third_id] to take it over)'}; left alone`,
      });
      continue;
    }
    if (adoptBy.includes('name') && !parent.startsWith('@')) {
      const candidate = (childrenByName.get(`${parent}\u0000${name}`) ?? []).find(
        (c) => !taken.has(c.id) && departmentOwnership(c, syncId) === 'unmanaged' && (c.third_department_id === '' || !desiredById.has(c.third_department_id)),
      );
      if (candidate) {
        taken.add(candidate.id);
        resolve.set(sid, candidate.id);
        const { fields, before } = differing(d, candidate);
        fields.third_department_id = sid;
        before.third_department_id = candidate.third_department_id;
        fields.metadata = { ...metadataValue(candidate.metadata), [MANAGED_BY_KEY]: syncId };
        upserts.push({
          id: `departments:adopt:${sid}`,
          entity: 'departments',
          op: 'adopt',
          thirdId: sid,
          platformId: candidate.id,
          description: `adopt department "${candidate.path}" (matched by name under the same parent)`,
          reason: 'sync.adopt.departments matches by name',
          fields,
          before,
          request: { method: 'PATCH', path: `/org/departments/${encodeURIComponent(candidate.id)}`, body: fields },
          dependsOn: NO_DEPS,
          adoptedBy: 'name',
        });
        continue;
      }
    }
    const id = `departments:create:${sid}`;
    const fields: Record<string, PlanValue> = {
      name,
      parent_id: parent === root.id ? '' : targetValue(parent),
      third_department_id: sid,
      metadata: { [MANAGED_BY_KEY]: syncId },
    };
    if (d.sort_order !== undefined) fields.sort_order = d.sort_order;
    creates.push({
      id,
      entity: 'departments',
      op: 'create',
      thirdId: sid,
      description: `create department "${name}" under "${label(parent)}"`,
      paths: { parent_id: { after: label(parent) } },
      reason: 'missing on the platform',
      fields,
      request: { method: 'POST', path: '/org/departments', body: fields },
      dependsOn: depsOf(parent),
    });
    resolve.set(sid, refTarget(id));
    newParentOf.set(refTarget(id), parent);
    newPaths.set(refTarget(id), `${label(parent)}/${name}`);
  }

  const removalCandidates: PlatformDepartment[] = [];
  if (provided) {
    for (const d of live) {
      if (d.depth === 0 || d.id === syncRootId || taken.has(d.id)) continue;
      if (departmentOwnership(d, syncId) !== 'owned') continue;
      if (d.third_department_id !== '' && desiredById.has(d.third_department_id)) continue;
      if (keptBecauseQuarantined(ctx, 'departments', d.third_department_id, d.id, d.name)) continue;
      removalCandidates.push(d);
    }
  }
  return { creates, upserts, moves, removalCandidates, resolve, tenantRootId: root.id, syncRootId, parentOf, newParentOf, labelOf: label, byId, byThird, ownedCount };
}

function differing(d: DesiredDepartment, p: PlatformDepartment): { fields: Record<string, PlanValue>; before: Record<string, PlanValue> } {
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
