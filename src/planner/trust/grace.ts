/**
 * Grace period (issue 10): a record that disappears from the sources is remembered as missing (since when, for how
 * many consecutive runs) and removed only once `sync.removal_grace` has passed. Pure: the missing set and the time
 * come in as arguments.
 */
import type { RemovalGrace } from '../../config/sync.js';
import type { Change, EntityKind } from '../../domain/index.js';

/** `sync.removal_grace`, parsed by the config schema. */
export type { RemovalGrace };

/** A record missing from the sources as remembered before this run. */
export interface MissingBefore {
  firstMissingAt: string;
  /** Consecutive runs that found it missing before this one. */
  runs: number;
}

/** A record missing in this run, as it will be remembered if the run is accepted. */
export interface MissingNow {
  entity: EntityKind;
  key: string;
  firstMissingAt: string;
  runs: number;
}

/** The key a removal is remembered under: its third id, or its platform id when it has none. */
export function removalKey(c: Pick<Change, 'thirdId' | 'platformId'>): string {
  return c.thirdId || c.platformId || '';
}

/** True when `c` removes a record because it is gone from the sources (not, e.g., a member marked left). */
export function isDisappearance(c: Change, desiredIds: Record<EntityKind, { has(id: string): boolean }>): boolean {
  return c.op === 'remove' && !(c.thirdId !== '' && desiredIds[c.entity].has(c.thirdId));
}

/** The grace decision for one disappearance. */
export interface GraceDecision {
  missing: MissingNow;
  /** Undefined: due now (removed in this run). */
  hold?: { why: string; dueAt?: string };
}

/** Decides whether a disappearance is removed now or withheld, and how it is remembered. */
export function graceDecision(c: Change, before: MissingBefore | undefined, grace: RemovalGrace, now: number): GraceDecision {
  const nowIso = new Date(now).toISOString();
  const missing: MissingNow = { entity: c.entity, key: removalKey(c), firstMissingAt: before?.firstMissingAt ?? nowIso, runs: (before?.runs ?? 0) + 1 };
  if (grace.kind === 'none') return { missing };
  if (grace.kind === 'duration') {
    const due = Date.parse(missing.firstMissingAt) + grace.ms;
    if (now >= due) return { missing };
    const dueAt = new Date(due).toISOString();
    return { missing, hold: { why: `grace: missing from the sources since ${missing.firstMissingAt}; sync.removal_grace ${grace.text}`, dueAt } };
  }
  if (missing.runs >= grace.runs) return { missing };
  return { missing, hold: { why: `grace: missing from the sources in ${missing.runs} of ${grace.runs} consecutive runs; removed on run ${grace.runs}` } };
}
