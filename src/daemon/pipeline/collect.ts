/**
 * The collect stage (issue 31): between the stages of a large run, a full garbage collection. A run's memory comes
 * in phases: reading the sources leaves the raw values, the batches and the duplicate tables behind; planning leaves
 * its indexes. V8 collects the old generation only when it has grown to a multiple of what was live at the last
 * full collection, which a million-member run reaches only at its end, so the garbage of every phase would be
 * carried, on top of what is live, to the peak. Collected at the boundary, the next phase reuses that space instead.
 *
 * Node has no public "collect now" without `--expose-gc`; `vm.measureMemory` with `execution: 'eager'` runs one full
 * collection to measure the heap, which is what is asked of it here (its figure goes to the debug log).
 */
import { measureMemory } from 'node:vm';
import type { Logger } from '../../shared/logger.js';

/** Records (or changes) from which a run collects between stages: below it the garbage is too small to matter. */
export const COLLECT_FROM_RECORDS = 50_000;

/**
 * Runs a full collection after `stage` when the run handles at least COLLECT_FROM_RECORDS `records`. Node warns once
 * that vm.measureMemory is experimental; the warning says nothing to an operator, so it is not printed.
 */
export async function collectStage(stage: string, records: number, logger: Logger): Promise<void> {
  if (records < COLLECT_FROM_RECORDS) return;
  const { total } = await collectNow();
  logger.debug({ stage, records, heap_mb: Math.round(total.jsMemoryEstimate / 1048576) }, 'heap collected between stages');
}

/**
 * Finished changes between two collections of an apply of `changes` (from COLLECT_FROM_RECORDS of them): a twentieth
 * of it, from 5,000 to COLLECT_FROM_RECORDS. What a change leaves in the old generation is garbage by the next
 * collection, so the interval bounds it: an initial sync of 100,000 members collected every 50,000 grew its heap
 * 15 MB during the apply, every 5,000 about 5 (a full collection of its heap takes some 20 ms).
 */
export function collectInterval(changes: number): number {
  return Math.min(COLLECT_FROM_RECORDS, Math.max(5_000, Math.ceil(changes / 20)));
}

/**
 * A counter for a long stage (the apply of a large plan): every `every` finished changes, a full collection, not
 * waited for. Each change leaves promises, closures and log values that live long enough to reach the old
 * generation; a million dry-run changes left 150 MB of them at the peak.
 */
export function collectEvery(logger: Logger, every = COLLECT_FROM_RECORDS): () => void {
  let finished = 0;
  return () => {
    finished += 1;
    if (finished % every !== 0) return;
    const at = finished; // the count when this collection was asked for, not when it answered
    void collectNow().then(
      ({ total }) => logger.debug({ stage: 'apply', finished: at, heap_mb: Math.round(total.jsMemoryEstimate / 1048576) }, 'heap collected during the apply'),
      () => undefined,
    );
  };
}

/** One full collection now (vm.measureMemory, eager), without Node's experimental-feature warning. */
function collectNow(): ReturnType<typeof measureMemory> {
  const emitWarning = process.emitWarning;
  process.emitWarning = () => undefined;
  try {
    return measureMemory({ mode: 'summary', execution: 'eager' });
  } finally {
    process.emitWarning = emitWarning;
  }
}
