/**
 * The trust filters of a plan (issue 10), run after the policy and before the delete threshold:
 *   1. shrink guard: entities whose source count dropped too far plan no removals; the run is refused (exit 3)
 *   2. scope guard: a changed config scope with removals (due now or later) refuses the run (exit 3)
 *   3. grace period: removals of records missing for less than sync.removal_grace are withheld with their due time
 * Pure: the state read from the DB, the time and the overrides come in as arguments.
 */
import type { Change, DesiredState, EntityKind } from '../../domain/index.js';
import { graceDecision, isDisappearance, removalKey, type MissingBefore, type MissingNow, type RemovalGrace } from './grace.js';
import { findSourceShrink, shrinkRefusal, sourceCounts, type ShrinkFinding } from './shrink-guard.js';
import { describeScopeChange, scopeChangeRefusal, type ConfigScope } from './scope-guard.js';
import { deleteThresholdGuard } from '../guards.js';
import type { PlanTrustFilter, TrustFilterResult, TrustThresholdInput } from './types.js';
import { withholdWhere, type HoldDecision } from './withhold.js';

export * from './types.js';
export * from './grace.js';
export * from './shrink-guard.js';
export * from './scope-guard.js';
export * from './withhold.js';
export * from './state-lost-guard.js';

/** What the trust filters of one run are built from. */
export interface TrustInputs {
  desired: DesiredState;
  /** Last good source counts per entity. */
  lastSnapshot: Partial<Record<EntityKind, number>>;
  maxShrinkPercent: number;
  /** `<entity>:<key>` -> missing as remembered before this run. */
  missingBefore: ReadonlyMap<string, MissingBefore>;
  grace: RemovalGrace;
  /** The scope last accepted (undefined: none recorded yet) and the current one. */
  previousScope?: ConfigScope;
  currentScope: ConfigScope;
  now: number;
  allowSourceShrink?: boolean;
  acceptScopeChange?: boolean;
  /** `--allow-deletes N`: an operator who permits at least all removals of the run has counted them; shrink accepted. */
  allowDeletes?: number;
}

/** What one filter call saw, for the run to record once it is accepted. */
export interface TrustObservation {
  shrink: ShrinkFinding[];
  /** True when the shrink guard was overridden. */
  shrinkAccepted: boolean;
  scopeChanges: string[];
  missing: MissingNow[];
}

/** Whether a source id is desired, per entity: sets of the departments and positions, the members' own lookup. */
function desiredIdSets(desired: DesiredState): Record<EntityKind, { has(id: string): boolean }> {
  const ids = (records: readonly { source_id: string }[]) => new Set(records.map((r) => r.source_id));
  return { departments: ids(desired.departments), positions: ids(desired.positions), members: { has: (id) => desired.members.get(id) !== undefined } };
}

/**
 * Builds the filter of one run; `observe` receives what the first call saw.
 * Precedence of refusals: scope change, then the delete threshold (when the removals also trip it, it is the guard
 * reported, with the shrink named in its message, so `--allow-deletes N` keeps its meaning), then the shrink guard.
 */
export function createTrustFilter(inputs: TrustInputs, observe?: (o: TrustObservation) => void): PlanTrustFilter {
  // Only removals are looked up: a plan with none (a first import) never builds the sets.
  let ids: Record<EntityKind, { has(id: string): boolean }> | undefined;
  const desiredIds = (): Record<EntityKind, { has(id: string): boolean }> => (ids ??= desiredIdSets(inputs.desired));
  const shrink = findSourceShrink(sourceCounts(inputs.desired), inputs.lastSnapshot, inputs.maxShrinkPercent);
  const scopeChanges = inputs.previousScope ? describeScopeChange(inputs.previousScope, inputs.currentScope) : [];
  let observed = false;
  return (changes: readonly Change[], threshold: TrustThresholdInput): TrustFilterResult => {
    const removals = changes.filter((c) => c.op === 'remove').length;
    // An accepted scope change explains a drop in the counts, so it accepts the shrink too.
    const shrinkAccepted =
      inputs.allowSourceShrink === true ||
      (inputs.acceptScopeChange === true && scopeChanges.length > 0) ||
      (inputs.allowDeletes !== undefined && removals <= inputs.allowDeletes);
    const missing: MissingNow[] = [];
    const grace = (c: Change): HoldDecision => {
      if (c.op !== 'remove' || !isDisappearance(c, desiredIds())) return undefined;
      const d = graceDecision(c, inputs.missingBefore.get(`${c.entity}:${removalKey(c)}`), inputs.grace, inputs.now);
      missing.push(d.missing);
      return d.hold;
    };
    const graceOnly = withholdWhere(changes, grace);
    if (!observed) {
      observed = true;
      observe?.({ shrink, shrinkAccepted, scopeChanges, missing });
    }
    if (scopeChanges.length > 0 && removals > 0 && inputs.acceptScopeChange !== true) {
      return { ...graceOnly, refusal: scopeChangeRefusal(scopeChanges, removals) };
    }
    if (shrink.length === 0 || shrinkAccepted) return graceOnly;
    const shrinkNote = shrinkRefusal(shrink, inputs.maxShrinkPercent);
    const over = deleteThresholdGuard(graceOnly.kept, threshold.owned, threshold.threshold, threshold.allowDeletes);
    if (over) return { ...graceOnly, refusal: { ...over, message: `${over.message}; also, ${shrinkNote.message}` } };
    const shrunk = new Set(shrink.map((f) => f.entity));
    const held = withholdWhere(graceOnly.kept, (c) => (c.op === 'remove' && shrunk.has(c.entity) ? { why: 'source_shrink: the source shrank beyond sync.max_source_shrink_percent' } : undefined));
    return { kept: held.kept, withheld: [...graceOnly.withheld, ...held.withheld], refusal: shrinkNote };
  };
}
