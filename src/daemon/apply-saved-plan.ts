/**
 * `orgsync apply plan.json` (issue 10), the use case: the run's stages composed for a saved plan. The file is checked
 * (./saved-plan.ts), the mirror refreshed and the sources re-read; either hash differing refuses the plan (exit 2).
 * Then exactly the plan's changes are applied in one round (no re-plan: a change the platform no longer accepts is
 * reported, and the next sync picks it up), and the trust state advances as in a sync run.
 */
import type { ApplyResult, ChangeResult } from '../applier/index.js';
import type { Change, DesiredState, Plan } from '../domain/index.js';
import { blockedRecords, countChanges } from '../domain/index.js';
import type { RecordHistory } from '../mirror/record-history.js';
import type { TrustStateStore } from '../mirror/trust-state.js';
import { EXIT, OrgsyncError } from '../shared/errors.js';
import { applyRound } from './pipeline/apply.js';
import { collectStage } from './pipeline/collect.js';
import { heapRoomStage } from './pipeline/heap-room.js';
import { planStage } from './pipeline/plan.js';
import { readSources } from './pipeline/read-sources.js';
import { refreshStage } from './pipeline/refresh.js';
import { notStartedOf } from './pipeline/not-started.js';
import { partialExitCode, toFailure, type RunObserver, type RunParts, type RunSummary } from './pipeline/run-state.js';
import { startRun, type RunContext } from './pipeline/start.js';
import { SavedChangeLoader } from './compact-changes.js';
import { fileChunks, integrityFailed, mirrorStateHash, planRefused, sourceSnapshotHash, type SavedPlanFile } from './saved-plan.js';
import { streamSavedPlan, type StreamedSavedPlan } from './saved-plan-stream.js';
import { createRunTrust } from './trust.js';

/** What applying a saved plan needs (the CLI builds them from the run environment). */
export interface SavedPlanDeps extends RunParts {
  trust: TrustStateStore;
  readDesiredState(signal?: AbortSignal): Promise<DesiredState>;
  observer?: RunObserver;
  callStats?(): { requests: number; rateLimited: number };
  /** Where the plan's writes are recorded per record (issue 22), under this run id and trigger. */
  recordHistory?: { store: RecordHistory; runId: string; trigger: string; retentionDays: number };
}

/** Refuses a plan that a guard refused when it was made (exit 3). */
function refuseGuarded(file: string, plan: Plan): void {
  if (plan.refusal) throw new OrgsyncError('GUARD_TRIPPED', `${file}: the plan was refused by ${plan.refusal.guard} when it was made, so it cannot be applied: ${plan.refusal.message}`);
}

/** The summary of an applied saved plan (its own outcome rules: no re-plan, so deferred changes count as failures). */
function savedPlanSummary(run: RunContext, plan: Plan, quarantine: DesiredState['quarantine'], result: ApplyResult): RunSummary {
  const failures = result.results.filter((r) => r.status !== 'applied' && r.status !== 'adopted' && r.status !== 'skipped_admin' && r.status !== 'not_started').map(toFailure);
  const notStarted = notStartedOf(result, plan.changes);
  // A lost lease or a refused credential fails the apply (as in a sync); a shutdown only stops it.
  const halted = result.stopReason && result.stopReason.kind !== 'shutdown' ? result.stopReason : undefined;
  const partial = failures.length > 0 || notStarted.length > 0 || quarantine.length > 0;
  const calls = run.deps.callStats?.() ?? { requests: 0, rateLimited: 0 };
  const writes = Object.values(result.applied).reduce((n, ops) => n + Object.values(ops).reduce((a, b) => a + b, 0), 0);
  return {
    syncId: run.settings.syncId,
    mode: 'apply',
    result: halted ? 'failed' : result.stopped ? 'stopped' : partial ? 'partial' : plan.changes.length === 0 ? 'in_sync' : 'applied',
    exitCode: result.stopped ? EXIT.FAILED : partial ? partialExitCode({ failures, notStarted }, run.settings.settle.exitCodeOnQuarantine) : EXIT.OK,
    dryRun: false,
    startedAt: new Date(run.started).toISOString(),
    durationMs: run.deps.clock.now() - run.started,
    plan: { ...plan, counts: countChanges(plan.changes) },
    applied: result.applied,
    byStatus: result.byStatus,
    failures,
    notStarted,
    quarantined: quarantine,
    blocked: blockedRecords(plan),
    skippedAdmin: result.byStatus.skipped_admin,
    replanRounds: 0,
    notConverged: [],
    apiCalls: calls.requests - run.callsAtStart.requests,
    rateLimited: calls.rateLimited - run.callsAtStart.rateLimited,
    phases: run.phases,
    ...(result.stopReason ? { stop: result.stopReason } : {}),
    ...(halted ? { error: `${halted.message}: stopped after ${writes} writes` } : result.stopped ? { error: 'stopped by a shutdown signal: writes in flight finished, nothing new was started' } : {}),
  };
}

/** Refuses the plan when the platform or the sources changed since it was made (exit 2, nothing applied). */
function refuseStale(file: string, saved: Pick<SavedPlanFile, 'inputs' | 'created_at'>, now: { mirrorHash?: string; sourceHash?: string }): void {
  if (now.mirrorHash !== undefined && now.mirrorHash !== saved.inputs.mirror_hash) {
    throw planRefused(file, `the platform changed since the plan was made (${saved.created_at}): the mirror state differs; nothing applied, make a new plan`);
  }
  if (now.sourceHash !== undefined && now.sourceHash !== saved.inputs.source_hash) {
    throw planRefused(file, `the sources changed since the plan was made (${saved.created_at}); nothing applied, make a new plan`);
  }
}

/**
 * The changes of the saved plan `file`, read again now that they are to be applied (issue 31 point 2: not held while
 * the sources are read and planned), each the change this run planned when it is the same (SavedChangeLoader);
 * refused as on the first read if the file changed since.
 */
function loadChanges(run: RunContext, file: string, first: StreamedSavedPlan, key: Buffer, replanned: readonly Change[]): Change[] {
  const loader = new SavedChangeLoader(replanned);
  const changes: Change[] = [];
  const each = (c: Change, index: number): void => {
    changes.push(loader.take(c, index));
  };
  const again = streamSavedPlan(() => fileChunks(file), file, run.settings.syncId, key, { each, restart: () => (changes.length = 0) });
  // Another plan signed by this state DB put in its place since the first read: not the plan that was checked.
  if (again.saved.integrity !== first.saved.integrity || changes.length !== first.changeCount) throw integrityFailed(file);
  run.deps.logger.debug({ file, as_planned: loader.counts.planned, as_saved: loader.counts.parsed }, 'saved plan loaded');
  return changes;
}

/**
 * Applies a saved plan: checks the file, refreshes the mirror, re-reads the sources, refuses (PLAN_REFUSED, exit 2)
 * when either hash differs, then executes exactly the plan's changes. Returns the run summary. The file is read
 * twice, change by change: checked first (nothing kept but its head), loaded once the sources were read and planned,
 * each saved change that equals the one planned at its place held as that planned change.
 */
export async function applySavedPlan(deps: SavedPlanDeps, file: string): Promise<RunSummary> {
  const run = startRun({ ...deps, trust: createRunTrust(deps.trust, deps.config, deps.mirror) }, { mode: 'apply' });
  const key = deps.trust.planSigningKey();
  const checked = streamSavedPlan(() => fileChunks(file), file, run.settings.syncId, key, { each: () => undefined });
  const saved = checked.saved;
  refuseGuarded(file, saved.plan);
  // Collected between the stages of a large plan (./pipeline/collect.ts): each leaves its garbage behind.
  await collectStage('check', checked.changeCount, deps.logger);
  // In a function of its own: what the sources and the planner built and the changes do not hold is let go when
  // it returns, before the saved changes are loaded.
  const read = await readAndPlan(run, deps, file, checked);
  await collectStage('plan', checked.changeCount, deps.logger);
  const plan: Plan = { ...saved.plan, changes: loadChanges(run, file, checked, key, read.replanned) };
  read.replanned = [];
  await collectStage('load', checked.changeCount, deps.logger);
  if (read.desired) run.observer?.onPlan?.(plan, read.desired);
  // What the observer needed the source records for is done: the changes hold what the apply needs of them.
  delete read.desired;
  run.observer?.onApplyStart?.(plan.changes.length);
  const history = run.writes.history(undefined);
  const result = await applyRound(run, plan.changes, (r: ChangeResult) => {
    history?.add(r);
    run.observer?.onChangeResult?.(r);
  });
  history?.flush();
  if (!result.stopped) run.writes.commitTrust(read.commitTrust);
  run.lap('applyMs');
  return savedPlanSummary(run, plan, read.quarantine, result);
}

/**
 * Refreshes the mirror and reads the sources, refusing the plan when either changed since it was made, and plans for
 * the trust state. Returns what the apply needs of it: the quarantine, the trust commit, the changes planned (what
 * the saved ones are compared with as they are loaded), and the desired state only when an observer is given it.
 */
async function readAndPlan(run: RunContext, deps: SavedPlanDeps, file: string, checked: StreamedSavedPlan): Promise<{ quarantine: DesiredState['quarantine']; commitTrust: (() => void) | undefined; replanned: readonly Change[]; desired?: DesiredState }> {
  const saved = checked.saved;
  await refreshStage(deps, run.settings.refresh);
  run.lap('refreshMs');
  refuseStale(file, saved, { mirrorHash: mirrorStateHash(deps.mirror, deps.ownership) });
  const desired = await readSources(deps);
  run.lap('sourcesMs');
  refuseStale(file, saved, { sourceHash: sourceSnapshotHash(desired) });
  await collectStage('sources', desired.members.length + desired.departments.length, deps.logger);
  heapRoomStage(desired, deps.ownership.ownedCount(), deps.logger);
  deps.logger.info({ file, changes: checked.changeCount, created_at: saved.created_at }, 'applying a saved plan');
  // The trust state advances as in a sync run (missing-since counters, source counts, scope): the plan of this run
  // is made for its trust observation, and its changes stand in for the saved ones they equal; the saved plan is
  // what is applied. Only the trust's commit is kept (it uses no `this`): the prepared trust's filter holds the
  // desired state.
  const planned = planStage(run, desired);
  run.lap('planMs');
  return { quarantine: desired.quarantine, commitTrust: planned.trust?.commit, replanned: planned.plan.changes, ...(run.observer?.onPlan ? { desired } : {}) };
}
