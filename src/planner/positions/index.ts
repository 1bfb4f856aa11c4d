/**
 * Positions: desired x mirror x ownership -> create / adopt / update / remove, as a decision table. "Owned" =
 * metadata.managed_by is this sync.id. Index step (rows.ts `buildPositionIndex`): live positions by third id and by
 * name. Each desired position goes to the first row that matches; then, when a source provides positions, every
 * live owned position that no desired one claimed. First match wins.
 *
 * | row                 | desired     | mirror (live)                    | ownership                                   | action                                  |
 * |---------------------|-------------|----------------------------------|---------------------------------------------|-----------------------------------------|
 * | `update_owned`      | present     | same third id                    | owned                                       | update name / description / sort_order that differ |
 * | `adopt_by_third_id` | present     | same third id                    | unmanaged + adopt [third_id], or pending create | adopt (sets managed_by) + patch     |
 * | `conflict`          | present     | same third id                    | other sync, system, or unmanaged            | warning not_owned_conflict (blocked); left alone |
 * | `adopt_by_name`     | present     | no third id match; same name     | unmanaged + adopt [name]                    | adopt: set third id + managed_by + patch |
 * | `create`            | present     | none                             | -                                           | create                                  |
 * | `kept_quarantined`  | quarantined | live                             | owned                                       | kept; warning quarantined_kept          |
 * | `gone`              | absent      | live                             | owned                                       | remove (DELETE)                         |
 * | (no row)            | absent      | live                             | not owned                                   | nothing                                 |
 */
import type { DesiredPosition, PlatformPosition } from '../../domain/index.js';
import type { DiffContext } from '../context.js';
import { adoptPosition, buildPositionIndex, classifyAbsentPosition, classifyPosition, createPosition, gonePosition, keptQuarantined, sameIdConflict, updateOwned } from './rows.js';
import { newPositionResult, type PositionDiff, type PositionEnv, type PositionResult, type PositionRow, type PositionRowName } from './types.js';

export type { PositionDiff } from './types.js';

/** One handler per row of the position table. */
export const POSITION_ROWS: Record<PositionRowName, (row: PositionRow, env: PositionEnv, out: PositionResult) => void> = {
  update_owned: updateOwned,
  adopt_by_third_id: adoptPosition,
  conflict: sameIdConflict,
  adopt_by_name: adoptPosition,
  create: createPosition,
  kept_quarantined: keptQuarantined,
  gone: gonePosition,
};

/** Diffs desired positions against the mirror: the index, then each desired and each absent owned one through the table. */
export function diffPositions(desired: readonly DesiredPosition[], live: readonly PlatformPosition[], provided: boolean, ctx: DiffContext): PositionDiff {
  const index = buildPositionIndex(desired, live, ctx.syncId);
  const env: PositionEnv = { ctx, index, adoptBy: ctx.opts.adopt.positions };
  const out = newPositionResult(ctx.warnings);
  for (const d of desired) {
    const row = classifyPosition(d, env, out);
    POSITION_ROWS[row.row](row, env, out);
  }
  if (provided) {
    for (const p of index.live) {
      const row = classifyAbsentPosition(p, env, out);
      if (row) POSITION_ROWS[row.row](row, env, out);
    }
  }
  return { upserts: out.upserts, removals: out.removals, ownedCount: index.ownedCount };
}
