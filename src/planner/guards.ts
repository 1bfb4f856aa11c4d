/** Guards: named filters that turn a suspicious plan into a refusal with a reason (nothing is applied). */
import type { SyncConfig } from '../config/sync.js';
import type { Change, DesiredState, EntityKind, PlanRefusal } from '../domain/index.js';
import { ENTITY_KINDS } from '../domain/index.js';
import { STATE_LOST, stateLostGuard } from './trust/state-lost-guard.js';

/** Owned live records per entity. */
export type OwnedCounts = Record<EntityKind, number>;

/**
 * Empty-source guard: a source that provides an entity but yields no record of it, while the mirror holds records of
 * it that this sync owns, is an error (an empty export looks exactly like "everyone left").
 */
export function emptySourceGuard(desired: DesiredState, owned: OwnedCounts): PlanRefusal | undefined {
  const empty = ENTITY_KINDS.filter((e) => desired.provided[e] && desired[e].length === 0 && owned[e] > 0);
  if (empty.length === 0) return undefined;
  return {
    guard: 'empty_source',
    message: `the sources yielded no ${empty.join(' and no ')} while this sync owns ${empty.map((e) => `${owned[e]} ${e}`).join(' and ')}; refusing to remove them all (check the sources)`,
  };
}

/**
 * Delete threshold: per entity, removals over `max_count` or over `max_percent` of the owned records refuse the
 * plan, unless `allowDeletes` (`--allow-deletes N`) permits at least all the removals of this run.
 */
export function deleteThresholdGuard(changes: readonly Change[], owned: OwnedCounts, threshold: SyncConfig['delete_threshold'], allowDeletes?: number): PlanRefusal | undefined {
  const removals: OwnedCounts = { positions: 0, departments: 0, members: 0 };
  for (const c of changes) if (c.op === 'remove') removals[c.entity] += 1;
  const total = removals.positions + removals.departments + removals.members;
  const over: NonNullable<PlanRefusal['entities']> = {};
  for (const e of ENTITY_KINDS) {
    const n = removals[e];
    if (n === 0) continue;
    const percent = owned[e] > 0 ? (n * 100) / owned[e] : 100;
    if (n > threshold.max_count || percent > threshold.max_percent) {
      over[e] = { removals: n, owned: owned[e], maxCount: threshold.max_count, maxPercent: threshold.max_percent };
    }
  }
  const names = Object.keys(over) as EntityKind[];
  if (names.length === 0) return undefined;
  if (allowDeletes !== undefined && total <= allowDeletes) return undefined;
  const detail = names.map((e) => `${over[e]!.removals} of ${over[e]!.owned} owned ${e}`).join(', ');
  return {
    guard: 'delete_threshold',
    message:
      allowDeletes !== undefined
        ? `the plan removes ${total} records (${detail}), more than --allow-deletes ${allowDeletes} permits`
        : `the plan removes ${detail}: over sync.delete_threshold (max_count ${threshold.max_count}, max_percent ${threshold.max_percent}); nothing applied (re-run with --allow-deletes ${total} to permit it)`,
    entities: over,
  };
}

/** What every guard of the list sees: the plan's inputs and the changes that passed the policy and trust filters. */
export interface GuardInput {
  syncId: string;
  desired: DesiredState;
  owned: OwnedCounts;
  /** Changes after the policy and the trust filters. */
  kept: readonly Change[];
  threshold: SyncConfig['delete_threshold'];
  allowDeletes?: number;
  /** Whether the state DB knows earlier runs of this sync.id (undefined: not checked). */
  stateKnown?: boolean;
  /** The trust filters' refusal (shrink guard, scope guard), when they refused. */
  trustRefusal?: PlanRefusal;
}

/** A guard: a named check that turns a suspicious plan into a refusal (nothing is applied). */
export interface PlanGuard {
  name: string;
  check(input: GuardInput): PlanRefusal | undefined;
}

/**
 * The guards, in order: the first refusal wins. A lost state comes first (without it ownership itself is unknown,
 * so every later count would mislead), then an empty source, the trust filters' refusals, the delete threshold.
 */
export const PLAN_GUARDS: readonly PlanGuard[] = [
  { name: STATE_LOST, check: (i) => stateLostGuard({ syncId: i.syncId, stateKnown: i.stateKnown, managed: i.owned }) },
  { name: 'empty_source', check: (i) => emptySourceGuard(i.desired, i.owned) },
  { name: 'trust', check: (i) => i.trustRefusal },
  { name: 'delete_threshold', check: (i) => deleteThresholdGuard(i.kept, i.owned, i.threshold, i.allowDeletes) },
];

/** The first refusal of `guards` (default: PLAN_GUARDS), or undefined when every guard lets the plan through. */
export function firstRefusal(input: GuardInput, guards: readonly PlanGuard[] = PLAN_GUARDS): PlanRefusal | undefined {
  for (const g of guards) {
    const r = g.check(input);
    if (r) return r;
  }
  return undefined;
}
