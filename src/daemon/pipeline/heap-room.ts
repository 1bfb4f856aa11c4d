/**
 * The heap-room check (issue 31): once the sources are read, a warning when V8's heap limit looks too small for the
 * run. Node sets that limit from the memory the process may use, in a container half its memory limit (332 MB at
 * 640Mi), and a plan of a million members there stopped with V8's fatal "JavaScript heap out of memory", which names
 * no setting. This warning comes before it and names the one to change.
 *
 * Issue 42: the members are staged in SQLite and planned a window at a time, so the heap holds the plan, not the
 * tenant: what counts is the records the run may create (departments, positions, and the members it does not own
 * yet), not every record it read. A daily run of a million members it owns needs no more than one of a thousand.
 */
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import type { DesiredState } from '../../domain/index.js';
import type { Logger } from '../../shared/logger.js';

/** What a run holds besides its records: code, modules, the mirror's tables (about 50 MB measured). */
const BASE_BYTES = 50 * 1048576;
/**
 * The heap a source record takes through planning: the record, its strings, its planned change and the garbage
 * between collections. A million members ran out at a 332 MB limit and planned within 480 (docs/operations.md).
 */
const BYTES_PER_RECORD = 350;

const mib = (bytes: number): number => Math.round(bytes / 1048576);

/** What the check found when the heap looks too small: the figures a warning carries. */
export interface HeapShortfall {
  records: number;
  heap_limit_mb: number;
  needed_mb: number;
  /** The memory the process may use (a container's limit, else the machine's). */
  memory_mb: number;
  /** The --max-old-space-size to set: the need and a quarter, at most three quarters of that memory. */
  suggested_max_old_space_size: number;
}

/** The shortfall for `records` records under a heap limit of `limitBytes`, the process allowed `memoryBytes` in all. */
export function heapShortfall(records: number, limitBytes: number, memoryBytes: number): HeapShortfall | undefined {
  const needed = BASE_BYTES + records * BYTES_PER_RECORD;
  if (limitBytes >= needed) return undefined;
  const suggested = Math.min(Math.ceil((needed * 1.25) / 1048576), Math.floor((memoryBytes * 0.75) / 1048576));
  return { records, heap_limit_mb: mib(limitBytes), needed_mb: mib(needed), memory_mb: mib(memoryBytes), suggested_max_old_space_size: suggested };
}

/** The warning's text; its figures are the fields of the line (HeapShortfall). */
export const HEAP_ROOM_MESSAGE =
  'the heap limit is below what this run needs, so it may stop with "JavaScript heap out of memory": Node sets the limit to half the memory the process may use (in a container, half its memory limit); set NODE_OPTIONS=--max-old-space-size=<suggested_max_old_space_size> (the chart\'s nodeHeapPercent does), and raise the memory limit too if that is below needed_mb';

/** The memory the process may use, as Node reckons it: the container's limit when there is one, at most the machine's. */
function memoryOfProcess(): number {
  const constrained = process.constrainedMemory?.() ?? 0;
  return constrained > 0 ? Math.min(constrained, totalmem()) : totalmem();
}

/**
 * Warns when the heap limit looks too small for what `desired` may plan: its departments and positions, and as many
 * members as it has beyond the `owned` ones (the creates of a first import; a member owned costs the plan nothing
 * unless it changed).
 */
export function heapRoomStage(desired: Pick<DesiredState, 'departments' | 'positions' | 'members'>, owned: number, logger: Logger, limits = { heap: getHeapStatistics().heap_size_limit, memory: memoryOfProcess() }): void {
  const records = desired.departments.length + desired.positions.length + Math.max(0, desired.members.length - owned);
  const shortfall = heapShortfall(records, limits.heap, limits.memory);
  if (shortfall) logger.warn(shortfall, HEAP_ROOM_MESSAGE);
}
