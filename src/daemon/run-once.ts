/**
 * One sync run: refresh the mirror -> read the sources -> plan -> guards -> apply (-> bounded re-plans).
 * The CLI (`plan`, `sync`) and the daemon call it; metrics and logs hang on the optional observer.
 */
import type { Config } from '../config/schema.js';
import type { BlockedRecord, DesiredState, EntityKind, Plan, QuarantineEntry } from '../domain/index.js';
import { blockedRecords, ENTITY_KINDS } from '../domain/index.js';
import { applyChanges, type ApplyCounts, type ChangeResult, type ChangeStatus, type StopReason, type WriteGate } from '../applier/index.js';
import type { Mirror } from '../mirror/mirror.js';
import type { OwnershipStore } from '../mirror/ownership.js';
import { RECORDED_STATUSES, type RecordHistory } from '../mirror/record-history.js';
import type { OrgPlatformPort } from '../platform/port.js';
import { isPlatformError, platformFailure } from '../platform/errors.js';
import { calculatePlan, lifecycleOptionsFrom, type PlannerSnapshot } from '../planner/index.js';
import { selectPlan, unmatchedMessage, type PlanSelection, type SelectedRecord } from '../planner/select.js';
import type { Clock } from '../shared/clock.js';
import { EXIT, OrgsyncError, type ExitCode } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { refreshMirror } from './refresh-mirror.js';
import type { RunTrust } from './trust.js';
import type { RunApprovals } from './approvals.js';

/** Hooks for metrics and progress; every one optional. */
export interface RunObserver {
  /** The plan of the run (the first one; re-plans are reported through onReplan). */
  onPlan?(plan: Plan, desired: DesiredState): void;
  /** A guard refused the plan. */
  onGuard?(guard: string, plan: Plan): void;
  /** Applying starts: `total` changes. */
  onApplyStart?(total: number): void;
  /** One change finished. */
  onChangeResult?(result: ChangeResult): void;
  /** A re-plan round starts with `total` changes. */
  onReplan?(round: number, total: number): void;
  /** The apply stopped starting writes (shutdown, lost lease, unrecordable write). */
  onStop?(reason: StopReason): void;
}

/** The parts every command that reads or writes the platform is built from (run, saved-plan apply, adopt, release). */
export interface RunParts {
  config: Config;
  client: OrgPlatformPort;
  mirror: Mirror;
  ownership: OwnershipStore;
  logger: Logger;
  clock: Clock;
  /** Graceful shutdown: once aborted no new write (nor retry) starts; writes in flight finish and are recorded. */
  signal?: AbortSignal;
  /** The end of the shutdown timeout: aborts the requests still in flight. */
  abortSignal?: AbortSignal;
  /** Checked before every write attempt (the lease's fencing gate); the first to refuse stops the apply. */
  writeGates?: readonly WriteGate[];
}

/** What a run is built from. The CLI builds the real parts; tests hand in their own. */
export interface RunOnceDeps extends RunParts {
  /** Reads the sources (src/sources readDesiredState bound to the config and env). */
  readDesiredState(signal?: AbortSignal): Promise<DesiredState>;
  observer?: RunObserver;
  /** Requests made and 429s seen by the client so far (the CLI counts them through the client's observer). */
  callStats?(): { requests: number; rateLimited: number };
  /** Issue 10: shrink guard, scope guard and grace period (src/daemon/trust.ts); absent: none of them. */
  trust?: RunTrust;
  /** Issue 20: saves refused plans as pending approvals and applies approved ones (src/daemon/approvals.ts). */
  approvals?: RunApprovals;
  /** Issue 22: where every write of the run is recorded per record, under this run id and trigger. */
  recordHistory?: { store: RecordHistory; runId: string; trigger: string; retentionDays: number };
}

/** Options of one run. */
export interface RunOnceOptions {
  /** `plan` refreshes, reads and plans; `apply` also applies. */
  mode: 'plan' | 'apply';
  /** `--allow-deletes N`. */
  allowDeletes?: number;
  /** Apply through the dry-run seam (nothing written). */
  dryRun?: boolean;
  /** Force a full walk of the mirror. */
  fullRefresh?: boolean;
  /** An extra observer for this run only (the CLI's progress line), called after `deps.observer`. */
  observer?: RunObserver;
  /** `--allow-source-shrink`: accept a source that shrank beyond sync.max_source_shrink_percent. */
  allowSourceShrink?: boolean;
  /** `--accept-scope-change`: accept removals after the config's scope changed. */
  acceptScopeChange?: boolean;
  /** `sync --only SELECTOR` (issue 22): apply only the changes touching these records and what they need first. */
  only?: readonly string[];
  /**
   * `only` joins several callers' selectors (triggers queued behind a running run): a selector that matches nothing is
   * reported in `summary.unmatched` instead of failing the other callers' records; the run still fails when none matched.
   */
  onlyJoined?: boolean;
  /** The run's id (the run history's), recorded with a pending approval and with the approval a run uses. */
  runId?: string;
}

/** Calls every hook of `a`, then of `b`. */
export function combineObservers(a: RunObserver | undefined, b: RunObserver | undefined): RunObserver | undefined {
  if (!a || !b) return a ?? b;
  return {
    onPlan: (plan, desired) => {
      a.onPlan?.(plan, desired);
      b.onPlan?.(plan, desired);
    },
    onGuard: (guard, plan) => {
      a.onGuard?.(guard, plan);
      b.onGuard?.(guard, plan);
    },
    onApplyStart: (total) => {
      a.onApplyStart?.(total);
      b.onApplyStart?.(total);
    },
    onChangeResult: (r) => {
      a.onChangeResult?.(r);
      b.onChangeResult?.(r);
    },
    onReplan: (round, total) => {
      a.onReplan?.(round, total);
      b.onReplan?.(round, total);
    },
    onStop: (reason) => {
      a.onStop?.(reason);
      b.onStop?.(reason);
    },
  };
}

/** A change that did not succeed, for the summary. */
export interface RunFailure {
  id: string;
  entity: EntityKind;
  op: string;
  thirdId: string;
  platformId?: string;
  status: ChangeStatus;
  message: string;
}

/** How a run ended. */
export type RunResultKind = 'in_sync' | 'blocked' | 'planned' | 'applied' | 'dry_run' | 'partial' | 'refused' | 'failed' | 'stopped';

/** The summary of one run (JSON-serialisable). */
export interface RunSummary {
  syncId: string;
  mode: 'plan' | 'apply';
  result: RunResultKind;
  exitCode: ExitCode;
  /** Applied through the dry-run seam: `applied` counts what would have been written; nothing was. */
  dryRun: boolean;
  startedAt: string;
  durationMs: number;
  /** The first plan of the run. */
  plan: Plan;
  /** Applied (or adopted) changes per entity and operation, over all rounds. */
  applied: ApplyCounts;
  byStatus: Record<ChangeStatus, number>;
  /** Changes that failed, conflicted or were skipped because a prerequisite did not succeed. */
  failures: RunFailure[];
  /** Changes never started (a stop signal, or sync.max_failures reached): not failures, they simply did not run. */
  notStarted: RunFailure[];
  quarantined: QuarantineEntry[];
  /** Source records the plan could neither create nor update (never "in sync" while there are any). */
  blocked: BlockedRecord[];
  /** Members holding tenant.admin that could not be removed. */
  skippedAdmin: number;
  replanRounds: number;
  /** Changes still pending after the last re-plan round (the run did not converge). */
  notConverged: RunFailure[];
  apiCalls: number;
  rateLimited: number;
  /** Where the time went, in ms: mirror refresh, source read, planning (snapshot + plan), apply (incl. re-plans). */
  phases?: { refreshMs: number; sourcesMs: number; planMs: number; applyMs: number };
  /** One line, when the run failed or was refused. */
  error?: string;
  /** Why the apply stopped starting writes, when it did. */
  stop?: StopReason;
  /** `--only`: each selected record and what was done to it; `plan` is then the selected part of the plan. */
  selection?: SelectionOutcome[];
  /** `--only` selectors of a joined trigger run that matched no record (the run went on for the others). */
  unmatched?: string[];
  /** Issue 20: the pending approval this refused run saved, or the approval whose plan this run applied. */
  approval?: { digest: string; state: 'pending' | 'used' };
}

/** `--only`: one selected record and what the run did about it. */
export interface SelectionOutcome extends SelectedRecord {
  /** One line per change of its own (`create applied`, `update failed: ...`), or why there was none. */
  done: string[];
  /** Prerequisites written for it first (`departments eng2: create applied`). */
  neededFirst: string[];
}

const zeroApplied = (): ApplyCounts => ({
  positions: { create: 0, adopt: 0, update: 0, move: 0, remove: 0 },
  departments: { create: 0, adopt: 0, update: 0, move: 0, remove: 0 },
  members: { create: 0, adopt: 0, update: 0, move: 0, remove: 0 },
});

/** The planner's view of the mirror and the ownership records. */
export function plannerSnapshot(mirror: Mirror, ownership: OwnershipStore): PlannerSnapshot {
  const pending = ownership.pendingCreates();
  return {
    departments: mirror.all('departments'),
    positions: mirror.all('positions'),
    members: mirror.all('members'),
    ownedMembers: ownership.ownedMembers(),
    pendingCreates: pending,
    pendingMemberContacts: ownership.pendingMemberContacts(),
    owedCompletions: ownership.owedCompletions(),
  };
}

/**
 * Drops the owed completions (ownership.ts 050) that the whole plan no longer asks for: the source changed its mind
 * (the new hire is active now, or gone) or the platform has the value already. A later suspension of that member is
 * then an ordinary update, which a create-only policy holds back.
 */
function settleMootCompletions(ownership: OwnershipStore, owed: PlannerSnapshot['owedCompletions'], plan: Plan): void {
  if (!owed || owed.size === 0) return;
  const asked = new Set<string>();
  for (const c of plan.changes) if (c.completes !== undefined) asked.add(c.completes);
  for (const w of plan.withheld) if (w.change.completes !== undefined) asked.add(w.change.completes);
  const moot = [...owed.keys()].filter((thirdId) => !asked.has(`members:create:${thirdId}`));
  if (moot.length > 0) ownership.inTransaction(() => moot.forEach((thirdId) => ownership.settleCompletion(thirdId)));
}

/** Runs once. Throws OrgsyncError for config, source and platform failures before anything was applied. */
export async function runOnce(deps: RunOnceDeps, options: RunOnceOptions): Promise<RunSummary> {
  const { config, logger, clock, mirror, ownership, client } = deps;
  const observer = combineObservers(deps.observer, options.observer);
  const sync = config.sync;
  const started = clock.now();
  const callsAtStart = deps.callStats?.() ?? { requests: 0, rateLimited: 0 };
  const refresh = async (entities?: readonly EntityKind[], full = false): Promise<void> => {
    try {
      await refreshMirror({
        client,
        mirror,
        clock,
        logger,
        overlapSeconds: config.state.mirror_overlap_seconds,
        fullWalkEveryMs: config.state.full_walk_every,
        full,
        ...(entities ? { entities } : {}),
        ...(deps.signal ? { signal: deps.signal } : {}),
      });
    } catch (err) {
      if (isPlatformError(err)) throw platformFailure(err);
      throw err;
    }
  };

  const phases = { refreshMs: 0, sourcesMs: 0, planMs: 0, applyMs: 0 };
  let mark = clock.now();
  const lap = (): number => {
    const t = clock.now();
    const d = t - mark;
    mark = t;
    return d;
  };
  await refresh(undefined, options.fullRefresh === true);
  phases.refreshMs = lap();
  const desired = await deps.readDesiredState(deps.signal);
  phases.sourcesMs = lap();
  const trust = deps.trust?.prepare(desired, options, clock.now());
  const planOpts = {
    syncId: sync.id,
    policy: sync.policy,
    memberRemoval: sync.member_removal,
    deleteThreshold: sync.delete_threshold,
    adopt: sync.adopt,
    lifecycle: lifecycleOptionsFrom(sync),
    ...(sync.root_department !== undefined ? { rootDepartment: sync.root_department } : {}),
    ...(options.allowDeletes !== undefined ? { allowDeletes: options.allowDeletes } : {}),
    ...(trust ? { trust: trust.filter } : {}),
    ...(deps.trust ? { stateKnown: deps.trust.knowsSync() } : {}),
  };
  const snapshot = plannerSnapshot(mirror, ownership);
  const fullPlan = calculatePlan(desired, snapshot, { ...planOpts, now: clock.now() });
  // `--only`: the same plan, narrowed to the selected records and their prerequisites (guards were judged on it whole),
  // matched against the platform records that plan was computed from (not read from the mirror a second time).
  const select = (p: Plan, platform: PlannerSnapshot): PlanSelection | undefined => (options.only && options.only.length > 0 ? selectPlan(p, desired, platform, options.only) : undefined);
  const selection = select(fullPlan, snapshot);
  if (selection && selection.unmatched.length > 0) {
    if (!options.onlyJoined || selection.records.length === 0) throw new OrgsyncError('USAGE', unmatchedMessage(selection.unmatched), { details: { unmatched: selection.unmatched } });
    logger.warn({ unmatched: selection.unmatched }, unmatchedMessage(selection.unmatched));
  }
  const plan = selection ? selection.plan : fullPlan;
  const quarantine = selection ? selection.quarantine : desired.quarantine;
  const results = new Map<string, ChangeResult>();
  phases.planMs = lap();
  observer?.onPlan?.(plan, desired);
  const counts = Object.fromEntries(ENTITY_KINDS.map((e) => [e, plan.counts[e]]));
  logger.info({ changes: plan.changes.length, counts, warnings: plan.warnings.length, withheld: plan.withheld.length, quarantined: desired.quarantine.length }, 'plan computed');
  for (const w of plan.warnings) logger.warn({ code: w.code, entity: w.entity, third_id: w.thirdId, platform_id: w.platformId }, w.message);

  const blocked = blockedRecords(plan);
  const nothingToDo = (): RunResultKind => (blocked.length > 0 ? 'blocked' : 'in_sync');
  const summary: RunSummary = {
    syncId: sync.id,
    mode: options.mode,
    result: plan.changes.length === 0 ? nothingToDo() : 'planned',
    exitCode: EXIT.OK,
    dryRun: options.mode === 'apply' && options.dryRun === true,
    startedAt: new Date(started).toISOString(),
    durationMs: 0,
    plan,
    applied: zeroApplied(),
    byStatus: { applied: 0, adopted: 0, failed: 0, conflict: 0, deferred: 0, skipped: 0, skipped_admin: 0, not_started: 0 },
    failures: [],
    notStarted: [],
    quarantined: quarantine,
    blocked,
    skippedAdmin: 0,
    replanRounds: 0,
    notConverged: [],
    apiCalls: 0,
    rateLimited: 0,
    phases,
  };
  const finish = (): RunSummary => {
    const calls = deps.callStats?.() ?? { requests: 0, rateLimited: 0 };
    summary.apiCalls = calls.requests - callsAtStart.requests;
    summary.rateLimited = calls.rateLimited - callsAtStart.rateLimited;
    summary.durationMs = clock.now() - started;
    if (options.mode === 'apply' && (!plan.refusal || decision?.kind === 'apply')) phases.applyMs = lap();
    if (selection) summary.selection = selectionOutcomes(selection, summary, results);
    if (selection && selection.unmatched.length > 0) summary.unmatched = selection.unmatched;
    if (options.mode === 'apply' && !summary.dryRun) pruneRecordHistory(deps);
    return summary;
  };

  // Issue 20: a refused apply run saves its plan for approval, or applies the approved plan it matches.
  const decision =
    plan.refusal && plan.refusal.guard !== 'empty_source' && deps.approvals && options.mode === 'apply' && options.dryRun !== true && !selection
      ? deps.approvals.onRefusal({
          plan,
          desired,
          now: clock.now(),
          ...(options.runId ? { runId: options.runId } : {}),
          overridden: () => {
            const all = deps.trust?.prepare(desired, { ...options, allowSourceShrink: true, acceptScopeChange: true, allowDeletes: Number.MAX_SAFE_INTEGER }, clock.now());
            const full = calculatePlan(desired, plannerSnapshot(mirror, ownership), { ...planOpts, allowDeletes: Number.MAX_SAFE_INTEGER, ...(all ? { trust: all.filter } : {}), now: clock.now() });
            return { plan: full, commitTrust: () => all?.commit() };
          },
        })
      : undefined;
  if (decision?.kind === 'apply') {
    logger.warn({ approval: decision.digest, guard: plan.refusal!.guard, changes: decision.plan.changes.length }, `applying approved plan ${decision.digest}`);
    summary.approval = { digest: decision.digest, state: 'used' };
    summary.plan = decision.plan;
    summary.result = decision.plan.changes.length === 0 ? nothingToDo() : 'planned';
  } else if (plan.refusal) {
    if (decision) {
      plan.refusal.message = decision.message;
      summary.approval = { digest: decision.digest, state: 'pending' };
      logger.warn({ approval: decision.digest, guard: plan.refusal.guard }, `plan saved as pending approval ${decision.digest}`);
    }
    observer?.onGuard?.(plan.refusal.guard, plan);
    summary.error = plan.refusal.message;
    if (plan.refusal.guard === 'empty_source') {
      summary.result = 'failed';
      summary.exitCode = EXIT.FAILED;
      logger.error({ guard: plan.refusal.guard }, plan.refusal.message);
    } else {
      summary.result = 'refused';
      summary.exitCode = EXIT.GUARD;
      logger.error({ guard: plan.refusal.guard, entities: plan.refusal.entities }, 'plan refused by a guard: nothing applied');
    }
    return finish();
  }
  if (options.mode === 'plan') return finish();

  // Only a whole plan of this run can tell that a completion is no longer asked for (not `--only`'s part of one).
  if (!selection && decision?.kind !== 'apply' && options.dryRun !== true) settleMootCompletions(ownership, snapshot.owedCompletions, fullPlan);
  let changes = decision?.kind === 'apply' ? decision.plan.changes : plan.changes;
  // Results are recorded as they arrive (the record history in batches; `--only`'s outcomes): the apply keeps only
  // the changes that did not succeed, so a run of 100,000 writes holds no result per write (issue 19).
  const history = options.dryRun !== true ? historyWriter(deps, decision?.kind === 'apply' ? decision.digest : undefined) : undefined;
  const onResult = (r: ChangeResult): void => {
    history?.add(r);
    if (selection) results.set(r.change.id, r);
    observer?.onChangeResult?.(r);
  };
  for (let round = 0; ; round += 1) {
    if (round === 0) observer?.onApplyStart?.(changes.length);
    else observer?.onReplan?.(round, changes.length);
    const result = await applyChanges(
      changes,
      { client, mirror, ownership, logger, clock, syncId: sync.id, adopt: sync.adopt, refresh: (entities) => refresh(entities) },
      {
        concurrency: config.platform.concurrency,
        maxFailures: sync.max_failures,
        dryRun: options.dryRun === true,
        ...(deps.signal ? { signal: deps.signal } : {}),
        ...(deps.abortSignal ? { abort: deps.abortSignal } : {}),
        ...(deps.writeGates ? { gates: deps.writeGates } : {}),
        onResult,
        keep: 'unsuccessful',
      },
    );
    history?.flush();
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
      if (r.status === 'not_started') summary.notStarted.push(toFailure(r));
      else if (r.status === 'failed' || r.status === 'conflict' || r.status === 'skipped') summary.failures.push(toFailure(r));
    }
    if (result.stopReason && result.stopReason.kind !== 'shutdown') {
      // A lost lease or an unrecordable write: the plan is abandoned; the next run starts over with a fresh one.
      summary.byStatus.deferred += deferred.length;
      summary.result = 'failed';
      summary.exitCode = EXIT.FAILED;
      summary.stop = result.stopReason;
      let writes = 0;
      for (const e of ENTITY_KINDS) for (const n of Object.values(summary.applied[e])) writes += n;
      summary.error = `${result.stopReason.message}: stopped after ${writes} writes`;
      logger.error({ stop: result.stopReason.kind, writes, not_started: result.byStatus.not_started }, summary.error);
      observer?.onStop?.(result.stopReason);
      return finish();
    }
    if (result.stopped || deps.signal?.aborted) {
      if (result.stopReason) {
        summary.stop = result.stopReason;
        observer?.onStop?.(result.stopReason);
      }
      summary.byStatus.deferred += deferred.length;
      summary.result = 'stopped';
      summary.exitCode = EXIT.FAILED;
      summary.error = `stopped by a shutdown signal: no new write or retry was started (${summary.byStatus.not_started} not started); requests in flight were given shutdown_timeout`;
      return finish();
    }
    if (deferred.length === 0) break;
    // An approved plan is applied exactly: no re-plan adds to it (the next run picks up what is left).
    if (round >= sync.max_replan_rounds || decision?.kind === 'apply') {
      summary.byStatus.deferred += deferred.length;
      summary.notConverged = deferred.map(toFailure);
      break;
    }
    // The platform changed under the plan: refresh and re-plan. Changes that already failed for good in this run
    // are not retried (that is what makes the loop bounded as well as the round limit).
    summary.replanRounds = round + 1;
    logger.info({ round: round + 1, deferred: deferred.length }, 're-planning after the platform changed under the plan');
    await refresh();
    const failedIds = new Set(summary.failures.map((f) => f.id).concat(summary.notStarted.map((f) => f.id), summary.byStatus.skipped_admin ? result.results.filter((r) => r.status === 'skipped_admin').map((r) => r.change.id) : []));
    // A re-plan may remove what the first plan (which passed the guards) removed, and no more.
    const allowed = Math.max(options.allowDeletes ?? 0, plan.changes.filter((c) => c.op === 'remove').length);
    const resnapshot = plannerSnapshot(mirror, ownership);
    const replanned = calculatePlan(desired, resnapshot, { ...planOpts, allowDeletes: allowed, now: clock.now() });
    const next = select(replanned, resnapshot)?.plan ?? replanned;
    if (next.refusal) {
      summary.byStatus.deferred += deferred.length;
      summary.notConverged = deferred.map(toFailure);
      logger.error({ guard: next.refusal.guard }, 're-plan refused by a guard');
      break;
    }
    changes = next.changes.filter((c) => !failedIds.has(c.id));
    if (changes.length === 0) break;
  }

  if (decision?.kind === 'apply') decision.commitTrust();
  else trust?.commit();
  const failed = summary.failures.length > 0 || summary.notStarted.length > 0 || quarantine.length > 0;
  if (summary.notConverged.length > 0) {
    summary.result = 'failed';
    summary.exitCode = EXIT.FAILED;
    summary.error = `the plan did not converge after ${sync.max_replan_rounds} re-plan round(s): ${summary.notConverged.slice(0, 10).map((f) => `${f.entity} ${f.thirdId || f.platformId} (${f.message})`).join('; ')}`;
    logger.error({ records: summary.notConverged.map((f) => f.id) }, 'plan did not converge');
  } else if (failed) {
    summary.result = summary.dryRun ? 'dry_run' : 'partial';
    summary.exitCode = partialExitCode(summary, sync.exit_code_on_quarantine);
  } else {
    summary.result = summary.plan.changes.length === 0 ? nothingToDo() : summary.dryRun ? 'dry_run' : 'applied';
  }
  return finish();
}

/**
 * The exit code of a run that finished with problems: 4 when a change failed or did not start; when the only problem
 * is quarantined source records, `sync.exit_code_on_quarantine` (4 or 0; the quarantine is counted either way).
 */
export function partialExitCode(summary: Pick<RunSummary, 'failures' | 'notStarted'>, onQuarantine: 0 | 4): ExitCode {
  return summary.failures.length > 0 || summary.notStarted.length > 0 ? EXIT.PARTIAL : onQuarantine;
}

function toFailure(r: ChangeResult): RunFailure {
  return {
    id: r.change.id,
    entity: r.change.entity,
    op: r.change.op,
    thirdId: r.change.thirdId,
    ...(r.platformId ?? r.change.platformId ? { platformId: (r.platformId ?? r.change.platformId)! } : {}),
    status: r.status,
    message: r.message ?? r.status,
  };
}

/** What the run did about each selected record (the `--only` summary). */
function selectionOutcomes(selection: PlanSelection, summary: RunSummary, results: ReadonlyMap<string, ChangeResult>): SelectionOutcome[] {
  const own = new Set(selection.selectedChangeIds);
  const line = (c: Plan['changes'][number]): string => {
    const r = results.get(c.id);
    if (r) return `${c.op} ${r.status === 'applied' && summary.dryRun ? 'would be applied (dry run)' : r.status}${r.message && r.status !== 'applied' && r.status !== 'adopted' ? `: ${r.message}` : ''}`;
    if (summary.result === 'refused') return `${c.op} refused by ${summary.plan.refusal?.guard ?? 'a guard'}`;
    return `${c.op} ${summary.mode === 'plan' ? 'planned' : 'not started'}`;
  };
  const isMine = (r: SelectedRecord, c: { entity: EntityKind; thirdId: string; platformId?: string }): boolean =>
    c.entity === r.entity && ((r.thirdId !== '' && c.thirdId === r.thirdId) || (r.platformId !== undefined && c.platformId === r.platformId));
  return selection.records.map((rec) => {
    const mine = summary.plan.changes.filter((c) => own.has(c.id) && isMine(rec, c));
    const done = mine.map(line);
    for (const b of summary.blocked) if (isMine(rec, { entity: b.entity, thirdId: b.sourceId, ...(b.platformId ? { platformId: b.platformId } : {}) })) done.push(`blocked: ${b.reason}: ${b.message}`);
    for (const q of summary.quarantined) if (q.entity === rec.entity && q.source_id === rec.thirdId) done.push(`quarantined: ${q.reason}: ${q.message}`);
    for (const w of summary.plan.withheld) if (isMine(rec, w.change)) done.push(`withheld ${w.change.op} (${w.why}${w.dueAt ? `, due ${w.dueAt}` : ''})`);
    for (const w of summary.plan.warnings) if (!w.blocks && isMine(rec, w)) done.push(`no write: ${w.code}: ${w.message}`);
    if (done.length === 0) done.push('nothing to do: the platform already matches the sources');
    const mineIds = new Set(mine.map((c) => c.id));
    const neededFirst = summary.plan.changes
      .filter((c) => !mineIds.has(c.id) && !selection.records.some((o) => own.has(c.id) && isMine(o, c)))
      .filter((c) => dependsTransitively(summary.plan.changes, mine, c.id))
      .map((c) => `${c.entity} ${c.thirdId || c.platformId || ''}: ${line(c)}`);
    return { ...rec, done, neededFirst };
  });
}

/** True when one of `from` waits (directly or not) for the change `id`. */
function dependsTransitively(changes: Plan['changes'], from: Plan['changes'], id: string): boolean {
  const byId = new Map(changes.map((c) => [c.id, c]));
  const seen = new Set<string>();
  const stack = from.flatMap((c) => c.dependsOn);
  while (stack.length > 0) {
    const d = stack.pop()!;
    if (d === id) return true;
    if (seen.has(d)) continue;
    seen.add(d);
    stack.push(...(byId.get(d)?.dependsOn ?? []));
  }
  return false;
}

/** Writes of a run recorded in the per-record history this many at a time (one transaction each). */
const HISTORY_BATCH = 500;

/**
 * Records the writes of a run in the per-record history as they finish, in batches (a failure to record is logged,
 * not fatal). Only the results the history keeps wait in the batch, and only until it is written.
 */
function historyWriter(deps: RunOnceDeps, approvalDigest: string | undefined): { add(r: ChangeResult): void; flush(): void } | undefined {
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
