/**
 * `orgsync apply plan.json` (issue 10), the use case: refreshes the mirror, re-reads the sources and executes exactly
 * the saved plan, or refuses (exit 2) when the file was edited or when the platform or the sources changed since.
 * The file format itself is ./saved-plan.ts.
 */
import { parseDuration } from '../config/platform.js';
import type { DesiredState, EntityKind } from '../domain/index.js';
import { blockedRecords, countChanges } from '../domain/index.js';
import { applyChanges, type ChangeResult } from '../applier/index.js';
import type { TrustStateStore } from '../mirror/trust-state.js';
import { describePlatformError, isPlatformError } from '../platform/errors.js';
import { calculatePlan, lifecycleOptionsFrom } from '../planner/index.js';
import { EXIT, OrgsyncError } from '../shared/errors.js';
import { refreshMirror } from './refresh-mirror.js';
import { partialExitCode, plannerSnapshot, type RunFailure, type RunObserver, type RunParts, type RunSummary } from './run-once.js';
import { mirrorStateHash, planRefused as refused, readSavedPlan, sourceSnapshotHash } from './saved-plan.js';
import { createRunTrust } from './trust.js';

/** What applying a saved plan needs (the CLI builds them from the run environment). */
export interface SavedPlanDeps extends RunParts {
  trust: TrustStateStore;
  readDesiredState(signal?: AbortSignal): Promise<DesiredState>;
  observer?: RunObserver;
  callStats?(): { requests: number; rateLimited: number };
}

function toFailure(r: ChangeResult): RunFailure {
  const platformId = r.platformId ?? r.change.platformId;
  return { id: r.change.id, entity: r.change.entity, op: r.change.op, thirdId: r.change.thirdId, ...(platformId ? { platformId } : {}), status: r.status, message: r.message ?? r.status };
}

/**
 * Applies a saved plan: checks the file, refreshes the mirror, re-reads the sources, refuses (PLAN_REFUSED, exit 2)
 * when either hash differs, then executes exactly the plan's changes (no re-plan: a change the platform no longer
 * accepts is reported, and the next sync picks it up). Returns the run summary.
 */
export async function applySavedPlan(deps: SavedPlanDeps, file: string): Promise<RunSummary> {
  const { config, client, mirror, ownership, logger, clock } = deps;
  const started = clock.now();
  const callsAtStart = deps.callStats?.() ?? { requests: 0, rateLimited: 0 };
  const saved = readSavedPlan(file, config.sync.id, deps.trust.planSigningKey());
  const plan = saved.plan;
  if (plan.refusal) {
    throw new OrgsyncError('GUARD_TRIPPED', `${file}: the plan was refused by ${plan.refusal.guard} when it was made, so it cannot be applied: ${plan.refusal.message}`);
  }
  const refresh = async (entities?: readonly EntityKind[]): Promise<void> => {
    try {
      await refreshMirror({
        client,
        mirror,
        clock,
        logger,
        overlapSeconds: config.state.mirror_overlap_seconds,
        fullWalkEveryMs: parseDuration(config.state.full_walk_every) ?? 24 * 3600_000,
        ...(entities ? { entities } : {}),
        ...(deps.signal ? { signal: deps.signal } : {}),
      });
    } catch (err) {
      if (isPlatformError(err)) throw new OrgsyncError('PLATFORM_ERROR', describePlatformError(err), { cause: err });
      throw err;
    }
  };
  await refresh();
  const refreshedAt = clock.now();
  const mirrorHash = mirrorStateHash(mirror, ownership);
  if (mirrorHash !== saved.inputs.mirror_hash) {
    throw refused(file, `the platform changed since the plan was made (${saved.created_at}): the mirror state differs; nothing applied, make a new plan`);
  }
  const desired = await deps.readDesiredState(deps.signal);
  const readAt = clock.now();
  if (sourceSnapshotHash(desired) !== saved.inputs.source_hash) {
    throw refused(file, `the sources changed since the plan was made (${saved.created_at}); nothing applied, make a new plan`);
  }
  logger.info({ file, changes: plan.changes.length, created_at: saved.created_at }, 'applying a saved plan');

  // The trust state advances as in a sync run (missing-since counters, source counts, scope).
  const trust = createRunTrust(deps.trust, config, mirror).prepare(desired, {}, clock.now());
  calculatePlan(desired, plannerSnapshot(mirror, ownership), {
    syncId: config.sync.id,
    policy: config.sync.policy,
    memberRemoval: config.sync.member_removal,
    adopt: config.sync.adopt,
    lifecycle: lifecycleOptionsFrom(config.sync),
    now: clock.now(),
    trust: trust.filter,
    ...(config.sync.root_department !== undefined ? { rootDepartment: config.sync.root_department } : {}),
  });

  const plannedAt = clock.now();
  deps.observer?.onPlan?.(plan, desired);
  deps.observer?.onApplyStart?.(plan.changes.length);
  const result = await applyChanges(
    plan.changes,
    { client, mirror, ownership, logger, clock, syncId: config.sync.id, adopt: config.sync.adopt, refresh },
    {
      concurrency: config.platform.concurrency,
      maxFailures: config.sync.max_failures,
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.observer?.onChangeResult ? { onResult: deps.observer.onChangeResult } : {}),
      keep: 'unsuccessful',
    },
  );
  const failures = result.results.filter((r) => r.status !== 'applied' && r.status !== 'adopted' && r.status !== 'skipped_admin' && r.status !== 'not_started').map(toFailure);
  const notStarted = result.results.filter((r) => r.status === 'not_started').map(toFailure);
  if (!result.stopped) trust.commit();
  // A lost lease or a refused credential fails the apply (as in a sync); a shutdown only stops it.
  const halted = result.stopReason && result.stopReason.kind !== 'shutdown' ? result.stopReason : undefined;
  const partial = failures.length > 0 || notStarted.length > 0 || desired.quarantine.length > 0;
  const calls = deps.callStats?.() ?? { requests: 0, rateLimited: 0 };
  // Where the time went (RunSummary.phases, as runOnce reports it); the plan itself was made by `orgsync plan`.
  const phases = { refreshMs: refreshedAt - started, sourcesMs: readAt - refreshedAt, planMs: plannedAt - readAt, applyMs: clock.now() - plannedAt };
  const summary: RunSummary = {
    syncId: config.sync.id,
    mode: 'apply',
    result: halted ? 'failed' : result.stopped ? 'stopped' : partial ? 'partial' : plan.changes.length === 0 ? 'in_sync' : 'applied',
    exitCode: result.stopped ? EXIT.FAILED : partial ? partialExitCode({ failures, notStarted }, config.sync.exit_code_on_quarantine) : EXIT.OK,
    dryRun: false,
    startedAt: new Date(started).toISOString(),
    durationMs: clock.now() - started,
    plan: { ...plan, counts: countChanges(plan.changes) },
    applied: result.applied,
    byStatus: result.byStatus,
    failures,
    notStarted,
    quarantined: desired.quarantine,
    blocked: blockedRecords(plan),
    skippedAdmin: result.byStatus.skipped_admin,
    replanRounds: 0,
    notConverged: [],
    apiCalls: calls.requests - callsAtStart.requests,
    rateLimited: calls.rateLimited - callsAtStart.rateLimited,
    phases,
    ...(result.stopReason ? { stop: result.stopReason } : {}),
    ...(halted
      ? { error: `${halted.message}: stopped after ${Object.values(result.applied).reduce((n, ops) => n + Object.values(ops).reduce((a, b) => a + b, 0), 0)} writes` }
      : result.stopped
        ? { error: 'stopped by a shutdown signal: writes in flight finished, nothing new was started' }
        : {}),
  };
  return summary;
}


