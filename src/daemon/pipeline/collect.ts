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
  const emitWarning = process.emitWarning;
  let measured: ReturnType<typeof measureMemory>;
  process.emitWarning = () => undefined;
  try {
    measured = measureMemory({ mode: 'summary', execution: 'eager' });
  } finally {
    process.emitWarning = emitWarning;
  }
  const { total } = await measured;
  logger.debug({ stage, records, heap_mb: Math.round(total.jsMemoryEstimate / 1048576) }, 'heap collected between stages');
}
