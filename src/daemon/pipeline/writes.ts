/**
 * The run's own writes besides the platform's (the trust state, owed completions, the record history, approvals),
 * behind one port with a real and a no-op implementation. The applier's seam (src/applier/seam.ts) picks one once per
 * run, as it picks the applier's executor: a dry run writes nothing, and no stage asks whether it is one.
 */
import { throughSeam, type ChangeResult } from '../../applier/index.js';
import type { Plan } from '../../domain/index.js';
import type { OwnershipStore } from '../../mirror/ownership.js';
import { RECORDED_STATUSES } from '../../mirror/record-history.js';
import type { PlannerSnapshot } from '../../planner/index.js';
import type { SourceReads } from '../../sources/index.js';
import type { RunApprovals } from '../approvals.js';
import type { RunOnceDeps } from './run-state.js';

/** Records the writes of a run in the per-record history as they finish. */
export interface HistoryWriter {
  add(r: ChangeResult): void;
  /** Writes what is batched (end of an apply round). */
  flush(): void;
}

/** The run's writes to the state DB. */
export interface RunWrites {
  /** Records the run's trust observation as accepted (`commit` of PreparedTrust, or an approval's). */
  commitTrust(commit: (() => void) | undefined): void;
  /** Drops the owed completions that the whole plan no longer asks for (see settleMootCompletions). */
  settleMootCompletions(owed: PlannerSnapshot['owedCompletions'], plan: Plan): void;
  /** The record history of this run's writes (under the approval whose plan it applies, if any). */
  history(approvalDigest: string | undefined): HistoryWriter | undefined;
  /** Drops record history older than state.history_days. */
  pruneHistory(): void;
  /** Saves refused plans as pending approvals and applies approved ones; undefined: neither. */
  approvals: RunApprovals | undefined;
  /** Issue 31: what the source read may do with the source snapshots (keep them, or only read them). */
  sourceReads(): SourceReads;
  /** Issue 31: saves the snapshots and watermarks of the read (one transaction), after the read. */
  commitSourceSnapshots(reads: SourceReads): void;
}

/** The writes of a run: real ones, or none in a dry run (the seam decides). */
export function runWritesFor(deps: RunOnceDeps, dryRun: boolean): RunWrites {
  return throughSeam(dryRun, () => realRunWrites(deps), () => DRY_RUN_WRITES);
}

/** What a dry run writes: nothing (and no approval is saved or used). */
export const DRY_RUN_WRITES: RunWrites = {
  commitTrust: () => undefined,
  settleMootCompletions: () => undefined,
  history: () => undefined,
  pruneHistory: () => undefined,
  approvals: undefined,
  sourceReads: () => ({ keep: false, reports: [] }),
  commitSourceSnapshots: () => undefined,
};

/** The real writes, into the stores of `deps`. */
export function realRunWrites(deps: RunOnceDeps): RunWrites {
  return {
    commitTrust: (commit) => commit?.(),
    settleMootCompletions: (owed, plan) => settleMootCompletions(deps.ownership, owed, plan),
    history: (digest) => historyWriter(deps, digest),
    pruneHistory: () => pruneRecordHistory(deps),
    approvals: deps.approvals,
    sourceReads: () => ({ keep: true, reports: [] }),
    commitSourceSnapshots: (reads) => reads.commit?.(),
  };
}

/**
 * Drops the owed completions (ownership.ts 050) that the whole plan no longer asks for: the source changed its mind
 * (the new hire is active now, or gone) or the platform has the value already. A later suspension of that member is
 * then an ordinary update, which a create-only policy holds back.
 */
export function settleMootCompletions(ownership: OwnershipStore, owed: PlannerSnapshot['owedCompletions'], plan: Plan): void {
  if (!owed || owed.size === 0) return;
  const asked = new Set<string>();
  for (const c of plan.changes) if (c.completes !== undefined) asked.add(c.completes);
  for (const w of plan.withheld) if (w.change.completes !== undefined) asked.add(w.change.completes);
  const moot = [...owed.keys()].filter((thirdId) => !asked.has(`members:create:${thirdId}`));
  if (moot.length > 0) ownership.inTransaction(() => moot.forEach((thirdId) => ownership.settleCompletion(thirdId)));
}

/** Writes of a run recorded in the per-record history this many at a time (one transaction each). */
const HISTORY_BATCH = 500;

/**
 * Records the writes of a run in the per-record history as they finish, in batches (a failure to record is logged,
 * not fatal). Only the results the history keeps wait in the batch, and only until it is written.
 */
function historyWriter(deps: RunOnceDeps, approvalDigest: string | undefined): HistoryWriter | undefined {
  const h = deps.recordHistory;
  if (!h) return undefined;
  let batch: ChangeResult[] = [];
  const flush = (): void => {
    if (batch.length === 0) return;
    const rows = batch;
    batch = [];
    try {
      h.store.recordResults(rows, { runId: h.runId, trigger: h.trigger, at: deps.clock.now(), ...(approvalDigest ? { approvalDigest } : {}) });
    } catch (err) {
      deps.logger.warn({ error: err instanceof Error ? err.message : String(err) }, 'could not record the writes in the record history');
    }
  };
  return {
    add(r) {
      if (!RECORDED_STATUSES.includes(r.status)) return;
      batch.push(r);
      if (batch.length >= HISTORY_BATCH) flush();
    },
    flush,
  };
}

/** Drops record history older than state.history_days (the end of every applying run). */
function pruneRecordHistory(deps: RunOnceDeps): void {
  const h = deps.recordHistory;
  if (!h) return;
  try {
    const pruned = h.store.prune(deps.clock.now() - h.retentionDays * 86_400_000);
    if (pruned > 0) deps.logger.info({ pruned, history_days: h.retentionDays }, 'record history pruned');
  } catch (err) {
    deps.logger.warn({ error: err instanceof Error ? err.message : String(err) }, 'could not prune the record history');
  }
}
