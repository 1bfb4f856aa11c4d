/** The trust filters' contract with the planner: one filter runs after the policy and before the delete threshold. */
import type { SyncConfig } from '../../config/sync.js';
import type { Change, EntityKind, PlanRefusal, WithheldChange } from '../../domain/index.js';

/** What the trust filters let through, what they held back and why, and an optional refusal. */
export interface TrustFilterResult {
  kept: Change[];
  withheld: WithheldChange[];
  /** `source_shrink` or `scope_change`; nothing is applied when set. */
  refusal?: PlanRefusal;
}

/** What the planner tells the filter about the delete threshold (a shrink that also trips it is reported as it). */
export interface TrustThresholdInput {
  /** Owned live records per entity. */
  owned: Record<EntityKind, number>;
  threshold: SyncConfig['delete_threshold'];
  allowDeletes?: number;
}

/** A trust filter bound to one run's inputs (state read before planning; the planner stays pure). */
export type PlanTrustFilter = (changes: readonly Change[], threshold: TrustThresholdInput) => TrustFilterResult;
