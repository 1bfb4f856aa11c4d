/** Guards: named filters that turn a suspicious plan into a refusal with a reason (nothing is applied). */
import type { SyncConfig } from '../config/sync.js';
import type { Change, DesiredState, EntityKind, PlanRefusal } from '../domain/index.js';
import { ENTITY_KINDS } from '../domain/index.js';

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
