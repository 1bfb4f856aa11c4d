/** The plan stage: the trust state prepared, the planner run over the mirror, with the run's guards and overrides. */
import type { DesiredState, Plan } from '../../domain/index.js';
import type { Mirror } from '../../mirror/mirror.js';
import type { OwnershipStore } from '../../mirror/ownership.js';
import { calculatePlan, type PlannerSnapshot, type PlanOptions } from '../../planner/index.js';
import { stateMembers } from '../../mirror/member-table.js';
import type { PreparedTrust } from '../trust.js';
import type { RunContext } from './start.js';

/** The planner's view of the mirror and the ownership records. */
export function plannerSnapshot(mirror: Mirror, ownership: OwnershipStore): PlannerSnapshot {
  const pending = ownership.pendingCreates();
  return {
    departments: mirror.all('departments'),
    positions: mirror.all('positions'),
    members: stateMembers(mirror.db, ownership.syncId),
    pendingCreates: pending,
    pendingMemberContacts: ownership.pendingMemberContacts(),
    owedCompletions: ownership.owedCompletions(),
  };
}

/** What the plan stage hands on: the whole plan, the snapshot it was made from, and how to plan again alike. */
export interface Planned {
  /** The whole plan (before `--only` narrows it). */
  plan: Plan;
  snapshot: PlannerSnapshot;
  /** The trust part of the run (absent without trust features). */
  trust: PreparedTrust | undefined;
  /** The options it was made with (without `now`): a re-plan uses the same, the same trust filter included. */
  planOptions: Omit<PlanOptions, 'now'>;
}

/** Plans the run: prepares the trust filter, snapshots the mirror and the ownership records, calculates the plan. */
export function planStage(run: RunContext, desired: DesiredState): Planned {
  const { deps, options, settings } = run;
  const trust = deps.trust?.prepare(desired, options, deps.clock.now());
  const planOptions: Omit<PlanOptions, 'now'> = {
    ...settings.plan,
    ...(options.allowDeletes !== undefined ? { allowDeletes: options.allowDeletes } : {}),
    ...(trust ? { trust: trust.filter } : {}),
    ...(deps.trust ? { stateKnown: deps.trust.knowsSync() } : {}),
  };
  const snapshot = plannerSnapshot(deps.mirror, deps.ownership);
  const plan = calculatePlan(desired, snapshot, { ...planOptions, now: deps.clock.now() });
  return { plan, snapshot, trust, planOptions };
}

/** Plans again over the mirror as it is now, as the first plan did, allowing `allowDeletes` removals. */
export function replan(run: RunContext, planned: Planned, desired: DesiredState, allowDeletes: number): { plan: Plan; snapshot: PlannerSnapshot } {
  const snapshot = plannerSnapshot(run.deps.mirror, run.deps.ownership);
  return { plan: calculatePlan(desired, snapshot, { ...planned.planOptions, allowDeletes, now: run.deps.clock.now() }), snapshot };
}

/**
 * The plan a guard stopped, with every overridable guard overridden (as `--allow-deletes N --allow-source-shrink
 * --accept-scope-change` would): what an approval applies, with its trust commit.
 */
export function overriddenPlan(run: RunContext, planned: Planned, desired: DesiredState): { plan: Plan; commitTrust(): void } {
  const { deps, options } = run;
  const all = deps.trust?.prepare(desired, { ...options, allowSourceShrink: true, acceptScopeChange: true, allowDeletes: Number.MAX_SAFE_INTEGER }, deps.clock.now());
  const plan = calculatePlan(desired, plannerSnapshot(deps.mirror, deps.ownership), { ...planned.planOptions, allowDeletes: Number.MAX_SAFE_INTEGER, ...(all ? { trust: all.filter } : {}), now: deps.clock.now() });
  return { plan, commitTrust: () => all?.commit() };
}
