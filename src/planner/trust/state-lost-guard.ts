/**
 * State-loss guard (issue 15): the state DB holds no record of earlier runs of this sync.id (new, lost, or recreated,
 * as with a chart's emptyDir) while the platform already holds departments or positions whose metadata.managed_by is
 * this sync.id. Member ownership, grace counters and source baselines live only in the state DB, so a run now would
 * own no member: leavers would stay and member changes would not be applied, while the summary looked clean. The run
 * is refused (exit 3) until a backup is restored or member ownership is re-taken by third id. A fresh tenant (nothing
 * managed by this sync.id) is not affected.
 */
import type { EntityKind, PlanRefusal } from '../../domain/index.js';

/** The guard's name (the refusal's `guard`, the metrics' `guard` label, /status). */
export const STATE_LOST = 'state_lost';

/** What the guard looks at. */
export interface StateLostInput {
  syncId: string;
  /** Whether the state DB knows earlier runs of this sync.id; undefined: not checked (nothing to compare). */
  stateKnown: boolean | undefined;
  /** Live records on the platform whose managed_by is this sync.id. */
  managed: Pick<Record<EntityKind, number>, 'departments' | 'positions'>;
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** The refusal, or undefined when the state is known, or nothing on the platform is managed by this sync.id. */
export function stateLostGuard(input: StateLostInput): PlanRefusal | undefined {
  if (input.stateKnown !== false) return undefined;
  const { departments, positions } = input.managed;
  if (departments + positions === 0) return undefined;
  const found = [departments > 0 ? plural(departments, 'department', 'departments') : '', positions > 0 ? plural(positions, 'position', 'positions') : ''].filter(Boolean).join(' and ');
  return {
    guard: STATE_LOST,
    message:
      `the state DB has no record of earlier runs of sync.id "${input.syncId}", but the platform already holds ${found} managed by it: ` +
      'the state DB was lost or recreated. Member ownership, grace counters and source baselines live in the state DB, so a run now ' +
      'would own no member: leavers would stay and member changes would not be applied. Nothing applied. Either restore a backup ' +
      '(orgsync state restore FILE), or re-take ownership of the members whose third_user_id equals a source id ' +
      '(orgsync adopt --match third-id --entity members); then run again',
  };
}
