/**
 * The disk-room check (issue 42 point 3): once the plan is known, a warning when the state DB's filesystem has less
 * free space than applying it is likely to write. A first import of a million members writes about a gigabyte of
 * mirror rows, ownership records and history (docs/operations.md sizes the volume per tenant); a disk that fills
 * stops the run with STATE_FULL, and nothing is lost, but the operator is better told before it starts.
 */
import { freeMegabytes } from '../../mirror/db-faults.js';
import type { Plan } from '../../domain/index.js';
import type { Logger } from '../../shared/logger.js';

/**
 * What a create leaves in the state DB: its mirror row, ownership record and history entry with their indexes (about
 * 950 bytes a member, about 1,000 a created one, measured at a million by bench:steady), rounded up.
 */
export const BYTES_PER_CREATE = 1024;
/** What any other change leaves: a history entry and the mirror row it rewrites (about 500 bytes), rounded up. */
export const BYTES_PER_CHANGE = 640;
/** The write-ahead log and SQLite's work between checkpoints, whatever the plan (1,000 pages of 4 KB, twice over). */
export const WAL_HEADROOM = 8 << 20;

/** What the check found when the room looks short: the figures a warning carries. */
export interface DiskShortfall {
  state_db: string;
  free_mb: number;
  needed_mb: number;
  creates: number;
  other_changes: number;
}

/** The room applying `plan` likely needs, against `freeMb`; undefined when there is enough (or nothing to say). */
export function diskShortfall(plan: Pick<Plan, 'changes'>, stateDb: string, freeMb: number | undefined): DiskShortfall | undefined {
  if (freeMb === undefined) return undefined;
  let creates = 0;
  for (const c of plan.changes) if (c.op === 'create') creates += 1;
  const others = plan.changes.length - creates;
  const needed = Math.ceil((creates * BYTES_PER_CREATE + others * BYTES_PER_CHANGE + WAL_HEADROOM) / 1048576);
  return freeMb >= needed ? undefined : { state_db: stateDb, free_mb: freeMb, needed_mb: needed, creates, other_changes: others };
}

/** The warning's text; its figures are the fields of the line (DiskShortfall). */
export const DISK_ROOM_MESSAGE =
  "the state DB's filesystem has less free space than applying this plan is likely to write (free_mb against needed_mb): grow the volume (the Helm chart's persistence.size; docs/operations.md sizes it per tenant) or free space there, or the run stops where the disk fills (STATE_FULL; nothing is lost, the next run resumes)";

/** Warns when the state DB's filesystem looks short for `plan`. */
export function diskRoomStage(plan: Pick<Plan, 'changes'>, stateDb: string, logger: Logger, free = freeMegabytes): void {
  if (stateDb === ':memory:') return;
  const shortfall = diskShortfall(plan, stateDb, free(stateDb));
  if (shortfall) logger.warn(shortfall, DISK_ROOM_MESSAGE);
}
