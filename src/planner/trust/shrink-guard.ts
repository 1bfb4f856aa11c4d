/**
 * Shrink guard (issue 10): an entity whose source count dropped by more than `sync.max_source_shrink_percent`
 * against the last good read plans no removals and refuses the run (exit 3) unless overridden. A truncated export or
 * a half-answered API reads exactly like "many people left".
 */
import type { DesiredState, EntityKind, PlanRefusal } from '../../domain/index.js';
import { ENTITY_KINDS } from '../../domain/index.js';

/**
 * The smallest drop (in records) the guard acts on: one record gone is one person leaving, never a truncated read,
 * and in a small directory it alone is more than 10%.
 */
export const MIN_SHRINK_DROP = 2;

/** One entity over the limit. */
export interface ShrinkFinding {
  entity: EntityKind;
  previous: number;
  current: number;
  /** Drop in percent (0-100), rounded to one decimal. */
  dropPercent: number;
}

/** Current source counts per provided entity. */
export function sourceCounts(desired: Pick<DesiredState, 'departments' | 'positions' | 'members' | 'provided'>): Partial<Record<EntityKind, number>> {
  const out: Partial<Record<EntityKind, number>> = {};
  for (const e of ENTITY_KINDS) if (desired.provided[e]) out[e] = desired[e].length;
  return out;
}

/** Entities whose count dropped by more than `maxPercent` (and by at least MIN_SHRINK_DROP records) against `previous`; entities never recorded are skipped. */
export function findSourceShrink(current: Partial<Record<EntityKind, number>>, previous: Partial<Record<EntityKind, number>>, maxPercent: number): ShrinkFinding[] {
  const out: ShrinkFinding[] = [];
  for (const e of ENTITY_KINDS) {
    const before = previous[e];
    const now = current[e];
    if (before === undefined || now === undefined || before <= 0 || before - now < MIN_SHRINK_DROP) continue;
    const drop = ((before - now) * 100) / before;
    if (drop > maxPercent) out.push({ entity: e, previous: before, current: now, dropPercent: Math.round(drop * 10) / 10 });
  }
  return out;
}

/** The refusal of a tripped shrink guard. */
export function shrinkRefusal(findings: readonly ShrinkFinding[], maxPercent: number): PlanRefusal {
  const detail = findings.map((f) => `${f.entity} ${f.previous} -> ${f.current} (-${f.dropPercent}%)`).join(', ');
  return {
    guard: 'source_shrink',
    message: `the sources shrank against the last good read: ${detail}, more than sync.max_source_shrink_percent ${maxPercent}; no removals planned for ${findings.map((f) => f.entity).join(' and ')}, nothing applied (check the sources; re-run with --allow-source-shrink to accept the new counts)`,
  };
}
