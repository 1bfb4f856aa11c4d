/**
 * The apply stage: one round of the applier, then bounded re-plans while the platform changed under the plan
 * (deferred changes), each round's outcome tallied into the summary.
 */
import { applyChanges, type ApplyCounts, type ApplyResult, type ChangeResult } from '../../applier/index.js';
import type { Change, DesiredState, EntityKind } from '../../domain/index.js';
import { ENTITY_KINDS } from '../../domain/index.js';
import { EXIT } from '../../shared/errors.js';
import { COLLECT_FROM_RECORDS, collectEvery, collectInterval } from './collect.js';
import type { Gate } from './guard.js';
import { replan, type Planned } from './plan.js';
import { refreshStage } from './refresh.js';
import { appendFailures, notStartedOf } from './not-started.js';
import { toFailure, type RunSummary } from './run-state.js';
import { narrow, type Selected } from './select.js';
import type { RunContext } from './start.js';

/** How the apply ended: `done` (settle next), or stopped by a shutdown, or halted (lost lease, refused credential). */
export interface Applied {
  ended: 'done' | 'stopped' | 'halted';
  /** `--only`: the result of each change of the run, by change id (empty otherwise). */
  results: Map<string, ChangeResult>;
}

/** One apply round: `changes` through the applier (the dry-run seam is its `dryRun`). */
export function applyRound(run: RunContext, changes: readonly Change[], onResult: (r: ChangeResult) => void): Promise<ApplyResult> {
  const { deps, settings } = run;
  const { client, mirror, ownership, logger, clock } = deps;
  const collect = changes.length >= COLLECT_FROM_RECORDS ? collectEvery(logger, collectInterval(changes.length)) : undefined;
  return applyChanges(
    changes,
    { client, mirror, ownership, logger, clock, syncId: settings.apply.syncId, adopt: settings.apply.adopt, refresh: (entities: readonly EntityKind[]) => refreshStage(deps, settings.refresh, { entities }) },
    {
      concurrency: settings.apply.concurrency,
      maxFailures: settings.apply.maxFailures,
      dryRun: run.options.dryRun === true,
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.abortSignal ? { abort: deps.abortSignal } : {}),
      ...(deps.writeGates ? { gates: deps.writeGates } : {}),
      onResult: collect === undefined ? onResult : (r) => (onResult(r), collect()),
      keep: 'unsuccessful',
    },
  );
}

/** Adds a round's outcome (of applying `changes`) to the summary; returns its deferred changes (the platform changed under them). */
export function tallyRound(summary: RunSummary, result: ApplyResult, changes: readonly Change[]): ChangeResult[] {
  for (const e of ENTITY_KINDS) for (const op of Object.keys(result.applied[e]) as (keyof ApplyCounts[EntityKind])[]) summary.applied[e][op] += result.applied[e][op];
  summary.byStatus.applied += result.byStatus.applied;
  summary.byStatus.adopted += result.byStatus.adopted;
  const deferred: ChangeResult[] = [];
  // result.results: the changes that did not succeed, in plan order.
  for (const r of result.results) {
    if (r.status === 'deferred') {
      deferred.push(r);
      continue;
    }
    summary.byStatus[r.status] += 1;
    if (r.status === 'skipped_admin') summary.skippedAdmin += 1;
    if (r.status === 'failed' || r.status === 'conflict' || r.status === 'skipped') summary.failures.push(toFailure(r));
  }
  // Those left unstarted at the end are not among the results, only counted there.
  summary.byStatus.not_started += result.notStarted?.positions.length ?? 0;
  const notStarted = notStartedOf(result, changes);
  if (notStarted.length > 0) summary.notStarted = summary.notStarted.length === 0 ? notStarted : appendFailures(summary.notStarted, notStarted);
  return deferred;
}

/** A round that stopped starting writes: the summary says why; undefined when it did not stop. */
function stoppedRound(run: RunContext, summary: RunSummary, result: ApplyResult, deferred: readonly ChangeResult[]): Applied['ended'] | undefined {
  const { logger, signal } = run.deps;
  if (result.stopReason && result.stopReason.kind !== 'shutdown') {
    // A lost lease or an unrecordable write: the plan is abandoned; the next run starts over with a fresh one.
    summary.byStatus.deferred += deferred.length;
    summary.result = 'failed';
    summary.exitCode = EXIT.FAILED;
    summary.stop = result.stopReason;
    let writes = 0;
    for (const e of ENTITY_KINDS) for (const n of Object.values(summary.applied[e])) writes += n;
    summary.error = `${result.stopReason.message}: stopped after ${writes} writes`;
    logger.error({ stop: result.stopReason.kind, writes, not_started: result.byStatus.not_started, error: summary.error }, 'apply stopped: no further write starts');
    run.observer?.onStop?.(result.stopReason);
    return 'halted';
  }
  if (!result.stopped && !signal?.aborted) return undefined;
  if (result.stopReason) {
    summary.stop = result.stopReason;
    run.observer?.onStop?.(result.stopReason);
  }
  summary.byStatus.deferred += deferred.length;
  summary.result = 'stopped';
  summary.exitCode = EXIT.FAILED;
  summary.error = `stopped by a shutdown signal: no new write or retry was started (${summary.byStatus.not_started} not started); requests in flight were given shutdown_timeout`;
  return 'stopped';
}

/** Ends the rounds with changes still deferred: the run did not converge. */
function notConverged(summary: RunSummary, deferred: readonly ChangeResult[]): void {
  summary.byStatus.deferred += deferred.length;
  summary.notConverged = deferred.map(toFailure);
}

/**
 * The changes of the next round after the platform changed under the plan: refresh, re-plan, and drop what already
 * failed for good in this run (that, and the round limit, bound the loop). Undefined: a guard refused the re-plan.
 */
async function replanRound(run: RunContext, planned: Planned, selected: Selected, desired: DesiredState, summary: RunSummary, last: ApplyResult): Promise<Change[] | undefined> {
  await refreshStage(run.deps, run.settings.refresh);
  const failedIds = new Set(summary.failures.map((f) => f.id).concat(summary.notStarted.map((f) => f.id), summary.byStatus.skipped_admin ? last.results.filter((r) => r.status === 'skipped_admin').map((r) => r.change.id) : []));
  // A re-plan may remove what the first plan (which passed the guards) removed, and no more.
  const allowed = Math.max(run.options.allowDeletes ?? 0, selected.plan.changes.filter((c) => c.op === 'remove').length);
  const again = replan(run, planned, desired, allowed);
  const next = narrow(run, again.plan, desired, again.snapshot)?.plan ?? again.plan;
  if (next.refusal) {
    run.deps.logger.error({ guard: next.refusal.guard }, 're-plan refused by a guard');
    return undefined;
  }
  return next.changes.filter((c) => !failedIds.has(c.id));
}

/** Applies what the guards let through: a round, then re-plans while changes are deferred, up to sync.max_replan_rounds. */
export async function applyStage(run: RunContext, gate: Extract<Gate, { kind: 'go' }>, planned: Planned, selected: Selected, desired: DesiredState, summary: RunSummary): Promise<Applied> {
  // Only a whole plan of this run can tell that a completion is no longer asked for (not `--only`'s part of one).
  if (!selected.selection && gate.approval === undefined) run.writes.settleMootCompletions(planned.snapshot.owedCompletions, planned.plan);
  // Results are recorded as they arrive (the record history in batches; `--only`'s outcomes): the apply keeps only
  // the changes that did not succeed, so a run of 100,000 writes holds no result per write (issue 19).
  const history = run.writes.history(gate.approval);
  const results = new Map<string, ChangeResult>();
  const onResult = (r: ChangeResult): void => {
    history?.add(r);
    if (selected.selection) results.set(r.change.id, r);
    run.observer?.onChangeResult?.(r);
  };
  let changes = gate.changes;
  for (let round = 0; ; round += 1) {
    if (round === 0) run.observer?.onApplyStart?.(changes.length);
    else run.observer?.onReplan?.(round, changes.length);
    const result = await applyRound(run, changes, onResult);
    history?.flush();
    const deferred = tallyRound(summary, result, changes);
    const stopped = stoppedRound(run, summary, result, deferred);
    if (stopped) return { ended: stopped, results };
    if (deferred.length === 0) break;
    // An approved plan is applied exactly: no re-plan adds to it (the next run picks up what is left).
    if (round >= run.settings.settle.maxReplanRounds || gate.approval !== undefined) {
      notConverged(summary, deferred);
      break;
    }
    summary.replanRounds = round + 1;
    run.deps.logger.info({ round: round + 1, deferred: deferred.length }, 're-planning after the platform changed under the plan');
    const next = await replanRound(run, planned, selected, desired, summary, result);
    if (!next) {
      notConverged(summary, deferred);
      break;
    }
    changes = next;
    if (changes.length === 0) break;
  }
  return { ended: 'done', results };
}
