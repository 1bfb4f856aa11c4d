/**
 * One sync run, as a pipeline of named stages (src/daemon/pipeline/): options -> refresh the mirror -> read the
 * sources -> collect -> heap room (a warning when the heap limit looks short) -> plan (with trust) -> select
 * (`--only`) -> collect -> guards and approval -> apply (a round
 * plus bounded re-plans) -> settle (trust commit, exit code) -> record. The CLI (`plan`, `sync`) and the daemon call it; metrics and logs
 * hang on the optional observer. `apply FILE` composes the same stages differently (./apply-saved-plan.ts).
 */
import { applyStage } from './pipeline/apply.js';
import { collectStage } from './pipeline/collect.js';
import { guardStage } from './pipeline/guard.js';
import { heapRoomStage } from './pipeline/heap-room.js';
import { diskRoomStage } from './pipeline/disk-room.js';
import { stateDbOptionsFrom } from './pipeline/options.js';
import { planStage } from './pipeline/plan.js';
import { readSourcesOfRun } from './pipeline/read-sources.js';
import { recordStage } from './pipeline/record.js';
import { refreshStage } from './pipeline/refresh.js';
import type { RunOnceDeps, RunOnceOptions, RunSummary } from './pipeline/run-state.js';
import { announcePlan, selectStage } from './pipeline/select.js';
import { settleStage } from './pipeline/settle.js';
import { startRun } from './pipeline/start.js';
import { openSummary } from './pipeline/summary.js';

export { combineObservers, partialExitCode } from './pipeline/run-state.js';
export type { RunFailure, RunObserver, RunOnceDeps, RunOnceOptions, RunParts, RunResultKind, RunSummary, SelectionOutcome } from './pipeline/run-state.js';
export { plannerSnapshot } from './pipeline/plan.js';

/** Runs once. Throws OrgsyncError for config, source and platform failures before anything was applied. */
export async function runOnce(deps: RunOnceDeps, options: RunOnceOptions): Promise<RunSummary> {
  const run = startRun(deps, options);
  await refreshStage(deps, run.settings.refresh, { full: options.fullRefresh === true });
  run.lap('refreshMs');
  const { desired, reads } = await readSourcesOfRun(run);
  run.lap('sourcesMs');
  await collectStage('sources', desired.members.length + desired.departments.length, deps.logger);
  heapRoomStage(desired, deps.ownership.ownedCount(), deps.logger);
  const planned = planStage(run, desired);
  diskRoomStage(planned.plan, stateDbOptionsFrom(deps.config).path, deps.logger);
  const selected = selectStage(run, planned, desired);
  run.lap('planMs');
  await collectStage('plan', planned.plan.changes.length, deps.logger);
  announcePlan(run, selected.plan, desired);
  const summary = openSummary(run, selected);
  if (reads.reports.length > 0) summary.sourceReads = reads.reports;
  const gate = guardStage(run, planned, selected, desired, summary);
  if (gate.kind === 'refused' || options.mode === 'plan') return recordStage(run, summary, selected, new Map(), false);
  const applied = await applyStage(run, gate, planned, selected, desired, summary);
  if (applied.ended === 'done') settleStage(run, gate, summary);
  return recordStage(run, summary, selected, applied.results, true);
}
