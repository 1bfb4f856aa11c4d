/** The run summary a run fills in as its stages go (JSON-serialisable; `orgsync sync --output json` prints it). */
import { blockedRecords } from '../../domain/index.js';
import { EXIT } from '../../shared/errors.js';
import { zeroApplied, zeroByStatus, type RunResultKind, type RunSummary } from './run-state.js';
import type { Selected } from './select.js';
import type { RunContext } from './start.js';

/** A run with nothing to write: `blocked` when source records could be neither created nor updated, else in sync. */
export function nothingToDo(summary: Pick<RunSummary, 'blocked'>): RunResultKind {
  return summary.blocked.length > 0 ? 'blocked' : 'in_sync';
}

/** The summary of a run that planned `selected`, before anything was applied. */
export function openSummary(run: RunContext, selected: Selected): RunSummary {
  const { plan } = selected;
  const blocked = blockedRecords(plan);
  return {
    syncId: run.settings.syncId,
    mode: run.options.mode,
    result: plan.changes.length === 0 ? nothingToDo({ blocked }) : 'planned',
    exitCode: EXIT.OK,
    dryRun: run.options.mode === 'apply' && run.options.dryRun === true,
    startedAt: new Date(run.started).toISOString(),
    durationMs: 0,
    plan,
    applied: zeroApplied(),
    byStatus: zeroByStatus(),
    failures: [],
    notStarted: [],
    quarantined: selected.quarantine,
    blocked,
    skippedAdmin: 0,
    replanRounds: 0,
    notConverged: [],
    apiCalls: 0,
    rateLimited: 0,
    phases: run.phases,
  };
}
