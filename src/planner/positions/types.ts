/** The values of the position decision table: the index, the result, and what every row handler reads. */
import type { Change, DesiredPosition, PlanWarning, PlatformPosition } from '../../domain/index.js';
import type { DiffContext } from '../context.js';
import type { Ownership } from '../ownership.js';

/** The position changes of a plan, unordered within each list. */
export interface PositionDiff {
  upserts: Change[];
  removals: Change[];
  /** Positions this sync owns (live), for the delete threshold. */
  ownedCount: number;
}

/** Live positions by third id and by name: the mirror and the ownership side of the table. */
export interface PositionIndex {
  /** Live (active) positions, in mirror order. */
  live: PlatformPosition[];
  byThird: Map<string, PlatformPosition>;
  /** Normalised name -> the live positions of that name. */
  byName: Map<string, PlatformPosition[]>;
  ownedCount: number;
  desiredIds: Set<string>;
}

/** What the row handlers of one position diff write. */
export interface PositionResult {
  upserts: Change[];
  removals: Change[];
  /** Warnings in the order they arise (the plan's own list when composed). */
  warnings: PlanWarning[];
  /** Live positions a desired position claimed (by third id or name). */
  taken: Set<string>;
}

/** A fresh result that writes its warnings into `warnings`. */
export function newPositionResult(warnings: PlanWarning[]): PositionResult {
  return { upserts: [], removals: [], warnings, taken: new Set() };
}

/** What every position row handler reads. */
export interface PositionEnv {
  ctx: DiffContext;
  index: PositionIndex;
  /** sync.adopt.positions. */
  adoptBy: readonly string[];
}

/** The rows of the table, in the order they are tried (the absent ones after every desired position). */
export type PositionRowName = 'update_owned' | 'adopt_by_third_id' | 'conflict' | 'adopt_by_name' | 'create' | 'kept_quarantined' | 'gone';

/** One row of the table: the rule that matched, the desired position (absent rows: none) and the live one. */
export interface PositionRow {
  row: PositionRowName;
  desired: DesiredPosition | undefined;
  live: PlatformPosition | undefined;
  own: Ownership | undefined;
  by: 'third_id' | 'crashed_create' | 'name' | undefined;
}
