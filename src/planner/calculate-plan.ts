/**
 * calculatePlan: desired state (sources) x mirror (platform) x ownership -> Plan. Pure: no I/O, no clock.
 *
 * Decision table (per record, keyed by the source id = third_*_id; "owned" = metadata.managed_by is this sync.id for
 * departments/positions, recorded in the state DB for members):
 *
 * | desired             | mirror (live)                       | ownership              | action                                   |
 * |---------------------|-------------------------------------|------------------------|------------------------------------------|
 * | present             | none                                | -                      | create (parents resolved, refs to creates) |
 * | present             | none; member left, owned            | owned (state DB)       | create (POST re-activates: re-hire)      |
 * | present             | same third id                       | owned                  | update only fields that differ; move     |
 * | present             | same third id                       | unmanaged + adopt      | adopt (log) + patch what differs         |
 * | present             | same third id                       | unmanaged, pending     | adopt (crashed create of this sync)      |
 * | present             | same third id                       | unmanaged / other sync | warning not_owned_conflict; left alone   |
 * | present (dept/pos)  | same name under same parent         | unmanaged + adopt name | adopt: set third id + managed_by         |
 * | present (dept)      | none; same name under same parent   | other sync / unmanaged | create; warning department_name_taken    |
 * | present (member)    | same phone / e-mail, other third id | unmanaged + adopt      | adopt + patch third_user_id              |
 * | present (member)    | same phone / e-mail, other third id | unmanaged              | warning not_owned_conflict; no create    |
 * | present (member)    | e-mail / phone differ               | owned                  | warning unpatchable_drift; no write      |
 * | status left (member)| live                                | owned                  | removal (member_removal)                 |
 * | absent, quarantined | live                                | owned                  | kept; warning quarantined_kept           |
 * | absent              | live                                | owned                  | removal (dept: only if it ends up empty) |
 * | absent (member)     | live, third id, in an owned dept    | not owned              | warning not_owned_absent; left alone     |
 * | absent              | live                                | not owned              | nothing                                  |
 * | absent (entity not provided by any source) | any           | any                    | nothing                                  |
 *
 * Each entity's own table, row by row with one named handler per row: members/index.ts, departments/index.ts,
 * positions/index.ts.
 *
 * Then: order (order.ts) -> policy (policies.ts) -> trust filters (trust/) -> guards (guards.ts PLAN_GUARDS: state lost,
 * empty source, the trust filters' refusals, delete threshold).
 * Before the member diff: the dated lifecycle rules (lifecycle/: scheduled, ended, ending).
 */
import type { DesiredState, EntityKind, LifecycleEvent, Plan, PlanWarning } from '../domain/index.js';
import { countChanges, PLAN_FORMAT_VERSION } from '../domain/index.js';
import type { DiffContext } from './context.js';
import { diffDepartments, type DepartmentDiff } from './departments/index.js';
import { targetRef } from './context.js';
import { diffMembers, type MemberDiffInput, type UnchangedRule } from './members/index.js';
import { diffPositions } from './positions/index.js';
import { firstRefusal, type OwnedCounts } from './guards.js';
import { orderDepartmentDeletes, orderMoves } from './order.js';
import { applyPolicy } from './policies.js';
import { departmentOwnership } from './ownership.js';
import type { PlannerSnapshot, PlanOptions } from './types.js';

/** Computes the plan of one run. */
export function calculatePlan(desired: DesiredState, snapshot: PlannerSnapshot, opts: PlanOptions): Plan {
  // Values the sources gave that were dropped from kept records (an invalid phone): counted with the plan's warnings.
  const warnings: PlanWarning[] = (desired.warnings ?? []).map((w) => ({ code: w.code, entity: w.entity, thirdId: w.source_id, message: `${w.source} ${w.location}: ${w.message}` }));
  const ctx: DiffContext = { syncId: opts.syncId, opts, warnings, pending: snapshot.pendingCreates ?? {}, ...(snapshot.pendingMemberContacts ? { pendingContacts: snapshot.pendingMemberContacts } : {}), ...(snapshot.owedCompletions ? { owedCompletions: snapshot.owedCompletions } : {}), held: quarantinedIds(desired) };

  const positions = diffPositions(desired.positions, snapshot.positions, desired.provided.positions, ctx);
  const departments = diffDepartments(desired.departments, snapshot.departments, desired.provided.departments, ctx);
  const removing = new Set(departments.removalCandidates.map((d) => d.id));
  const nowMs = opts.now instanceof Date ? opts.now.getTime() : opts.now;
  // Dated lifecycle first, member by member: a future hire is not desired yet, a leaver past end_date is desired as gone.
  const life = { events: [] as LifecycleEvent[] };
  const lifecycle = opts.lifecycle ? { opts: opts.lifecycle, now: nowMs, events: life.events } : undefined;
  const input = memberInputOf(departments, desired.provided.departments, removing, opts.syncId);
  const members = diffMembers(snapshot.members.table(desired.members), desired.provided.members, ctx, input, lifecycle, unchangedRuleOf(departments, desired.provided.departments, removing, snapshot));
  const moves = orderMoves(departments.moves, departments, warnings);
  const deletes = orderDepartmentDeletes(
    { candidates: departments.removalCandidates, parentOf: departments.parentOf, byId: departments.byId, moves, leaving: members.leaving, staying: members.staying },
    warnings,
  );
  const all = concatAll([positions.upserts, departments.creates, departments.upserts, moves, members.upserts, members.removals, deletes, positions.removals]);
  const owned: OwnedCounts = { positions: positions.ownedCount, departments: departments.ownedCount, members: members.ownedCount };
  const policed = applyPolicy(all, opts.policy);
  const trusted = opts.trust?.(policed.kept, { owned, threshold: opts.deleteThreshold, ...(opts.allowDeletes !== undefined ? { allowDeletes: opts.allowDeletes } : {}) });
  const kept = trusted?.kept ?? policed.kept;
  const withheld = trusted ? concatAll([policed.withheld, trusted.withheld]) : policed.withheld;
  const refusal = firstRefusal({
    syncId: opts.syncId,
    desired,
    owned,
    kept,
    threshold: opts.deleteThreshold,
    ...(opts.allowDeletes !== undefined ? { allowDeletes: opts.allowDeletes } : {}),
    ...(opts.stateKnown !== undefined ? { stateKnown: opts.stateKnown } : {}),
    ...(trusted?.refusal ? { trustRefusal: trusted.refusal } : {}),
  });
  const now = opts.now instanceof Date ? opts.now : new Date(opts.now);
  return {
    formatVersion: PLAN_FORMAT_VERSION,
    syncId: opts.syncId,
    policy: opts.policy,
    createdAt: now.toISOString(),
    changes: kept,
    warnings,
    withheld,
    ...(refusal ? { refusal } : {}),
    counts: countChanges(kept),
    ...(life.events.length > 0
      ? { lifecycle: { scheduled: life.events.filter((e) => e.rule === 'scheduled'), ended: life.events.filter((e) => e.rule === 'ended'), ending: life.events.filter((e) => e.rule === 'ending') } }
      : {}),
  };
}

/** How the member diff finds departments: through the department diff's resolutions and the live tree. */
function memberInputOf(departments: DepartmentDiff, provided: boolean, removing: ReadonlySet<string>, syncId: string): MemberDiffInput {
  return {
    resolveDepartment: (sid) => departments.resolve.get(sid) ?? (provided ? undefined : departments.byThird.get(sid)?.id),
    removing,
    tenantRootId: departments.tenantRootId,
    departmentLabel: departments.labelOf,
    isOwnedDepartment: (id) => {
      const d = departments.byId.get(id);
      return d !== undefined && departmentOwnership(d, syncId) === 'owned';
    },
  };
}

/** What shows a member certainly unchanged (UnchangedRule): the departments that already are, what is being removed, what is owed. */
function unchangedRuleOf(departments: DepartmentDiff, provided: boolean, removing: ReadonlySet<string>, snapshot: PlannerSnapshot): UnchangedRule {
  const existing = new Map<string, string>();
  if (!provided) for (const [sid, d] of departments.byThird) existing.set(sid, d.id);
  for (const [sid, target] of departments.resolve) {
    if (targetRef(target) === undefined) existing.set(sid, target);
    else existing.delete(sid);
  }
  return { departments: existing, removing, tenantRootId: departments.tenantRootId, owed: new Set(snapshot.owedCompletions?.keys() ?? []) };
}

/** The lists one after the other, in one array sized at once (no spread of lists a million long). */
function concatAll<T>(lists: readonly (readonly T[])[]): T[] {
  let n = 0;
  for (const l of lists) n += l.length;
  const out = new Array<T>(n);
  let i = 0;
  for (const l of lists) for (const x of l) out[i++] = x;
  return out;
}

/** The source ids of quarantined records per entity (records the planner must not remove). */
function quarantinedIds(desired: DesiredState): Record<EntityKind, Set<string>> {
  const held: Record<EntityKind, Set<string>> = { departments: new Set(), positions: new Set(), members: new Set() };
  for (const q of desired.quarantine) if (q.source_id) held[q.entity].add(q.source_id);
  return held;
}

/** Owned record counts the guards used, recomputed for reports. */
export type { OwnedCounts };
