import { randomUUID } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { EXIT, isOrgsyncError, recordedMessage } from '../shared/errors.js';
import { selectorProblem, selectorProblemMessage } from '../planner/select.js';
import type { Config } from '../config/schema.js';
import { blockedRecords, CHANGE_OPS, ENTITY_KINDS } from '../domain/index.js';
import type { Mirror } from '../mirror/mirror.js';
import { OWNERSHIP_TRIGGERS, type RunHistory, type RunRecord } from '../mirror/runs.js';
import { OrgsyncMetrics, type MirrorProbe, type RunResult } from '../observability/metrics.js';
import { startOpsServer, type OpsHandlers, type OpsServer, type Readiness, type LatestPlanView } from '../observability/http-server.js';
import { bearerOf, tokenMatches, type ListenerSecurity } from '../observability/route-access.js';
import { BurstLog } from '../observability/burst-log.js';
import type { RunObserver, RunSummary } from './run-once.js';
import type { Scheduler } from './schedule.js';
import { LEASE_LOST } from './fencing.js';
import { CREDENTIAL_STOPS } from '../applier/index.js';

/** What a run is given. */
export interface RunContext {
  runId: string;
  /** What started it: `start`, `schedule` or `once`. */
  trigger: string;
  /** A child logger carrying run_id. */
  logger: Logger;
  /** Aborted on SIGTERM/SIGINT: start no new writes, let those in flight finish and record them, then return. */
  stopSignal: AbortSignal;
  /** Aborted when the shutdown grace is over: give up now. */
  killSignal: AbortSignal;
  /** `POST /sync?only=SELECTOR` (issue 22): only these records. */
  only?: readonly string[];
  /** `only` joins the selectors of several triggers: one that matches nothing does not fail the others. */
  onlyJoined?: boolean;
}

/** How a run ended. */
export interface RunOutcome {
  result: RunResult;
  exitCode: number;
  /** The run's summary (JSON-serialisable), shown on /status. */
  summary?: unknown;
  /** One line, when the run failed. */
  error?: string;
  /**
   * The failure will not go away by itself (the platform refused the credential): /readyz reports not ready at once,
   * not only after failing for twice the schedule interval, until a later run succeeds.
   */
  persistent?: boolean;
  /**
   * The run could not do what its caller asked (a `POST /sync?only=` selector matched no record): recorded and
   * answered on GET /runs/<id> as failed, exit code 2, but not a failure of the sync: not counted in the run metrics
   * (so no OrgsyncSyncFailing page for a webhook's typo) nor remembered as /readyz's last failure.
   */
  callerError?: boolean;
}

/** One sync run (refresh, read sources, plan, guards, apply), as the daemon drives it. */
export type RunSync = (ctx: RunContext) => Promise<RunOutcome>;

/** What the daemon is built from (all injected: the CLI builds the real ones, tests hand in their own). */
export interface DaemonDeps {
  runSync: RunSync;
  logger: Logger;
  metrics: OrgsyncMetrics;
  history: RunHistory;
  scheduler: Scheduler;
  clock: Clock;
  /** host:port of /metrics /healthz /readyz /status; "" for none. */
  listen: string;
  /** The process's SIGTERM/SIGINT. */
  shutdownSignal: AbortSignal;
  /** Whether the state DB is open (for /readyz). */
  stateOpen: () => boolean;
  /** Facts for /status. */
  info: { syncId: string; version: string; schedule: string; timezone: string };
  /** How long in-flight writes may take to finish after a signal (`shutdown_timeout`, default 20 s in the schema). */
  shutdownGraceMs: number;
  /** Told once the listener is up (tests read the URL from here). */
  onListening?: (url: string) => void;
  newRunId?: () => string;
  /** GET /plan and /plan.json: the latest run's plan, rendered (issue 20). */
  latestPlan?: () => LatestPlanView | undefined;
  /** /status: the plans waiting for approval (issue 20). */
  pendingApprovals?: () => unknown[];
  /**
   * Issue 22: the bearer token POST /sync requires, read at each request (daemon.trigger_token_file); absent, or
   * returning undefined: the trigger endpoints answer 404.
   */
  triggerToken?: () => string | undefined;
  /** GET /records/<selector>/history (issue 22): a record's history, newest first. */
  recordHistory?: (selector: string) => unknown[];
  /** Issue 29: the read token of the personal routes and the listener's TLS. */
  listenerSecurity?: ListenerSecurity;
}

/** The daemon's state, for /status. */
export type DaemonState = 'starting' | 'idle' | 'running' | 'stopping';

/** What the daemon knows while it runs (for /status, /readyz and the trigger queue). */
interface DaemonRuntime {
  state: DaemonState;
  startedAt: number;
  current: { id: string; trigger: string; startedAt: number; done: Promise<void> } | undefined;
  /** One trigger waits while a run is in progress (later triggers join it, never stack; issue 22). */
  queued: { id: string; trigger: string; only?: string[]; joined?: boolean } | undefined;
  lastSuccessAt: number | undefined;
  lastFailurePersistent: boolean;
  /** Runs of this process that failed for their caller's selector (RunOutcome.callerError), oldest first. */
  callerErrors: Set<string>;
  skipped: number;
  /** Aborted when the shutdown grace is over. */
  kill: AbortController;
  newRunId: () => string;
}

/** What an earlier process left: runs it did not finish (marked interrupted) and the last success and run, for the metrics. */
function recoverHistory(deps: DaemonDeps, rt: DaemonRuntime): void {
  const { history, metrics, logger } = deps;
  const abandoned = history.closeAbandoned();
  if (abandoned > 0) logger.warn({ runs: abandoned }, 'marked runs left unfinished by an earlier process as interrupted');
  const previousSuccess = history.lastWith(['success', 'partial']);
  if (previousSuccess?.finishedAt) {
    rt.lastSuccessAt = Date.parse(previousSuccess.finishedAt);
    // A restarted daemon still knows when the mirror was last synced (the no-success alert reads this).
    metrics.lastSuccessTimestampSeconds.set(rt.lastSuccessAt / 1000);
  }
  const previousRun = history.lastWith(['success', 'partial', 'failed', 'guard', 'interrupted']);
  if (previousRun?.finishedAt) metrics.lastRunTimestampSeconds.set(Date.parse(previousRun.finishedAt) / 1000);
}

/** Runs one sync and turns a throw into the outcome `orgsync sync` would have ended with (2 for `--only` matching nothing...). */
async function outcomeOf(deps: DaemonDeps, ctx: RunContext): Promise<RunOutcome> {
  try {
    return await deps.runSync(ctx);
  } catch (err) {
    // As recorded (issue 44): a selector that matched nothing is named by position, not by value.
    const message = recordedMessage(err);
    return {
      result: deps.shutdownSignal.aborted ? 'interrupted' : 'failed',
      exitCode: isOrgsyncError(err) ? err.exitCode : EXIT.FAILED,
      error: message,
      ...(isOrgsyncError(err) && err.details?.unmatched !== undefined ? { callerError: true } : {}),
    };
  }
}

/** Records a finished run: the run history, the metrics, /readyz's memory, and one log line. */
function recordRunEnd(deps: DaemonDeps, rt: DaemonRuntime, run: { id: string; start: number; logger: Logger }, outcome: RunOutcome): void {
  const finishedAt = deps.clock.now();
  try {
    deps.history.finish(run.id, { finishedAt, result: outcome.result, exitCode: outcome.exitCode, summary: outcome.summary, ...(outcome.error ? { error: outcome.error } : {}) });
  } catch (err) {
    run.logger.error({ err }, 'could not record the run in the state DB');
  }
  if (outcome.callerError) {
    rt.callerErrors.add(run.id);
    // Only the newest are needed (readiness looks past them to the last run that counts).
    if (rt.callerErrors.size > 100) rt.callerErrors.delete(rt.callerErrors.values().next().value!);
  } else deps.metrics.recordRun(outcome.result, run.start, finishedAt);
  if (outcome.result === 'success' || outcome.result === 'partial') rt.lastSuccessAt = finishedAt;
  if (outcome.result !== 'dry_run' && !outcome.callerError) rt.lastFailurePersistent = outcome.result === 'failed' && outcome.persistent === true;
  const fields = { result: outcome.result, exit_code: outcome.exitCode, duration_seconds: (finishedAt - run.start) / 1000, ...(outcome.error ? { error: outcome.error } : {}) };
  if (outcome.callerError) run.logger.warn(fields, 'triggered run not done: its selector matched no record (nothing written)');
  else if (outcome.result === 'failed') run.logger.error(fields, 'run failed');
  else if (outcome.result === 'success') run.logger.info(fields, 'run finished');
  else run.logger.warn(fields, 'run finished with problems');
}

/** Starts a run unless one is running (a tick during a run is skipped and logged); the queued trigger follows it. */
function startRun(deps: DaemonDeps, rt: DaemonRuntime, trigger: string, opts: { runId?: string; only?: readonly string[]; onlyJoined?: boolean } = {}): void {
  const { logger, clock, history } = deps;
  if (deps.shutdownSignal.aborted) return;
  if (rt.current) {
    rt.skipped += 1;
    logger.warn({ trigger, running_run_id: rt.current.id }, 'scheduled run skipped: the previous run is still running');
    return;
  }
  const runId = opts.runId ?? rt.newRunId();
  const runLogger = logger.child({ run_id: runId });
  const runStart = clock.now();
  history.start(runId, trigger, runStart);
  rt.state = 'running';
  runLogger.info({ trigger }, 'run started');
  const done = (async () => {
    const ctx: RunContext = { runId, trigger, logger: runLogger, stopSignal: deps.shutdownSignal, killSignal: rt.kill.signal, ...(opts.only ? { only: opts.only } : {}), ...(opts.onlyJoined ? { onlyJoined: true } : {}) };
    recordRunEnd(deps, rt, { id: runId, start: runStart, logger: runLogger }, await outcomeOf(deps, ctx));
    rt.current = undefined;
    if (rt.state === 'running') rt.state = 'idle';
    const next = rt.queued;
    rt.queued = undefined;
    if (next && !deps.shutdownSignal.aborted) startRun(deps, rt, next.trigger, { runId: next.id, ...(next.only ? { only: next.only } : {}), ...(next.joined ? { onlyJoined: true } : {}) });
  })();
  rt.current = { id: runId, trigger, startedAt: runStart, done };
}

/** /readyz: the state DB is open, and the last run that counts did not fail for long (or for good). */
function readinessOf(deps: DaemonDeps, rt: DaemonRuntime): Readiness {
  const { history, scheduler, clock } = deps;
  const checks: Record<string, string> = { config: 'ok', state_db: deps.stateOpen() ? 'ok' : 'closed' };
  // Dry runs (a `sync --dry-run` on the same state DB) say nothing about the health of the sync, nor do triggered
  // runs whose selector matched nothing (callerError): the last run that counts is the one before them.
  const counted = ['success', 'partial', 'failed', 'guard', 'interrupted'] as const;
  let last = history.lastWith(counted);
  if (last && rt.callerErrors.has(last.id)) last = history.recent(rt.callerErrors.size + 20).find((r) => !rt.callerErrors.has(r.id) && (counted as readonly string[]).includes(r.result) && !(OWNERSHIP_TRIGGERS as readonly string[]).includes(r.trigger));
  const limitMs = 2 * scheduler.intervalMs();
  if (last && last.result === 'failed') {
    const since = rt.lastSuccessAt ?? rt.startedAt;
    const failingMs = clock.now() - since;
    if (rt.lastFailurePersistent) checks.last_run = `failed: ${last.error ?? 'see /status'} (not ready until a run succeeds)`;
    else checks.last_run = failingMs > limitMs ? `failing for ${Math.round(failingMs / 1000)}s (more than twice the schedule interval): ${last.error ?? 'see /status'}` : 'ok';
  } else {
    checks.last_run = 'ok';
  }
  if (rt.state === 'stopping') checks.daemon = 'stopping';
  return { ready: Object.values(checks).every((v) => v === 'ok'), checks };
}

/** /status. */
function statusOf(deps: DaemonDeps, rt: DaemonRuntime): Record<string, unknown> {
  return {
    sync_id: deps.info.syncId,
    version: deps.info.version,
    state: rt.state,
    started_at: new Date(rt.startedAt).toISOString(),
    schedule: deps.info.schedule,
    timezone: deps.info.timezone,
    next_run: deps.scheduler.nextRun()?.toISOString() ?? null,
    current_run: rt.current ? { id: rt.current.id, trigger: rt.current.trigger, started_at: new Date(rt.current.startedAt).toISOString() } : null,
    last_success_at: rt.lastSuccessAt === undefined ? null : new Date(rt.lastSuccessAt).toISOString(),
    skipped_ticks: rt.skipped,
    runs: deps.history.recent(20) satisfies RunRecord[],
    ...(deps.pendingApprovals ? { pending_approvals: deps.pendingApprovals() } : {}),
  };
}

/** POST /sync: starts a run, or queues one behind the run in progress (a later trigger joins the queued one). */
function triggerRun(deps: DaemonDeps, rt: DaemonRuntime, only: string[] | undefined): { status: number; body: unknown } {
  if (deps.shutdownSignal.aborted) return { status: 503, body: { error: { code: 'stopping', message: 'the daemon is stopping' } } };
  if (!rt.current) {
    const id = rt.newRunId();
    startRun(deps, rt, 'http', { runId: id, ...(only ? { only } : {}) });
    return { status: 202, body: { run_id: id, queued: false } };
  }
  if (rt.queued) {
    // Queued once: a later trigger joins the waiting run (a full run covers every selection).
    if (!only || !rt.queued.only) delete rt.queued.only;
    else {
      rt.queued.only = [...new Set([...rt.queued.only, ...only])];
      rt.queued.joined = true;
    }
  } else rt.queued = { id: rt.newRunId(), trigger: 'http', ...(only ? { only: [...only] } : {}) };
  deps.logger.info({ run_id: rt.queued.id, running_run_id: rt.current.id }, 'triggered run queued behind the run in progress');
  return { status: 202, body: { run_id: rt.queued.id, queued: true } };
}

/** The ops listener (/metrics /healthz /readyz /status /plan and the issue-22 routes): the one place routes are wired. */
async function startListener(deps: DaemonDeps, rt: DaemonRuntime): Promise<OpsServer | undefined> {
  if (deps.listen === '') return undefined;
  // Every refusal is counted; one line per burst of them is logged (issue 44: a scanner must not flood the log).
  const refusedLog = new BurstLog(deps.clock);
  const refused = (route: string) => refusedLog.hit((unlogged) => deps.logger.warn({ route, ...(unlogged > 0 ? { refused_unlogged: unlogged } : {}) }, 'request refused: missing or wrong bearer token'));
  const extra = triggerRoutes({
    token: () => deps.triggerToken?.(),
    unauthorized: () => {
      deps.metrics.triggerUnauthorizedTotal.inc();
      refused('/sync');
    },
    trigger: (only) => triggerRun(deps, rt, only),
    run: (id) => (rt.queued?.id === id ? { id, result: 'queued', trigger: rt.queued.trigger } : deps.history.get(id)),
    ...(deps.recordHistory ? { recordHistory: deps.recordHistory } : {}),
  });
  const security = deps.listenerSecurity ?? {};
  const onUnauthorized = (route: string) => {
    deps.metrics.httpUnauthorizedTotal.inc({ route });
    refused(route);
  };
  const access = { ...(security.readToken ? { readToken: security.readToken } : {}), onUnauthorized };
  const server = await startOpsServer(deps.listen, { registry: deps.metrics.registry, readiness: () => readinessOf(deps, rt), status: () => statusOf(deps, rt), extra, access, logger: deps.logger, ...(security.tls ? { tls: security.tls } : {}), ...(deps.latestPlan ? { plan: deps.latestPlan } : {}) });
  deps.logger.info({ url: server.url }, 'ops endpoints listening (/metrics /healthz /readyz /status /plan /plan.json)');
  deps.onListening?.(server.url);
  return server;
}

/** After the shutdown signal: lets the run in flight finish its writes within the grace period, else abandons it. */
async function drainRun(deps: DaemonDeps, rt: DaemonRuntime, graceMs: number): Promise<void> {
  const { logger, clock } = deps;
  const inFlight = rt.current;
  if (!inFlight) return;
  logger.info({ run_id: inFlight.id, grace_seconds: graceMs / 1000 }, 'waiting for the run in flight to finish its writes');
  const timer = new AbortController();
  const finished = await Promise.race([inFlight.done.then(() => true), clock.sleep(graceMs, timer.signal).then(() => false, () => false)]);
  timer.abort();
  if (finished) return;
  logger.warn({ run_id: inFlight.id }, 'the run did not finish within the grace period; abandoning it');
  rt.kill.abort(new Error('shutdown grace period is over'));
  // One more short wait so the run can record what it abandoned.
  const t2 = new AbortController();
  await Promise.race([inFlight.done, clock.sleep(2_000, t2.signal).catch(() => undefined)]);
  t2.abort();
}

/**
 * Runs `orgsync daemon`: one run at start, then one per schedule tick, never two at once (a tick during a run is
 * skipped and logged). Serves the ops endpoints. On the shutdown signal it stops scheduling, lets the run in flight
 * finish its writes (up to the grace period), records it, closes the listener and resolves with exit code 0.
 */
export async function runDaemon(deps: DaemonDeps): Promise<number> {
  const { logger, scheduler } = deps;
  const rt: DaemonRuntime = {
    state: 'starting',
    startedAt: deps.clock.now(),
    current: undefined,
    queued: undefined,
    lastSuccessAt: undefined,
    lastFailurePersistent: false,
    callerErrors: new Set<string>(),
    skipped: 0,
    kill: new AbortController(),
    newRunId: deps.newRunId ?? (() => randomUUID()),
  };
  recoverHistory(deps, rt);
  const server = await startListener(deps, rt);
  const stopped = new Promise<void>((resolve) => {
    if (deps.shutdownSignal.aborted) resolve();
    else deps.shutdownSignal.addEventListener('abort', () => resolve(), { once: true });
  });

  logger.info({ schedule: deps.info.schedule, timezone: deps.info.timezone }, 'daemon started');
  startRun(deps, rt, 'start');
  scheduler.start(() => startRun(deps, rt, 'schedule'));
  if (rt.state === 'starting') rt.state = 'idle';

  await stopped;
  rt.state = 'stopping';
  scheduler.stop();
  logger.info({ reason: String((deps.shutdownSignal.reason as Error | undefined)?.message ?? deps.shutdownSignal.reason ?? 'shutdown') }, 'stopping: no new runs');
  await drainRun(deps, rt, deps.shutdownGraceMs);
  await server?.close();
  logger.info({}, 'daemon stopped');
  return EXIT.OK;
}

// --- Wiring runOnce to metrics, /status and the Pushgateway (shared by `daemon`, `sync` and `demo`) ---------------

/** The run result label of a RunSummary's result. */
export function runResultOf(summary: Pick<RunSummary, 'result'>): RunResult {
  switch (summary.result) {
    case 'in_sync':
    case 'blocked':
    case 'applied':
    case 'planned':
      return 'success';
    case 'partial':
      return 'partial';
    case 'refused':
      return 'guard';
    case 'stopped':
      return 'interrupted';
    case 'dry_run':
      return 'dry_run';
    default:
      return 'failed';
  }
}

/** Writes applied by a run (creates, adoptions, updates, moves, removals over every entity). */
export function writesOf(summary: Pick<RunSummary, 'applied'>): number {
  let n = 0;
  for (const e of ENTITY_KINDS) for (const op of CHANGE_OPS) n += summary.applied[e][op];
  return n;
}

/** A RunSummary small enough for /status and the run history: counts, not the plan's changes. */
export function compactSummary(summary: RunSummary): Record<string, unknown> {
  const quarantineByReason: Record<string, number> = {};
  for (const q of summary.quarantined) quarantineByReason[q.reason] = (quarantineByReason[q.reason] ?? 0) + 1;
  return {
    result: summary.result,
    exit_code: summary.exitCode,
    started_at: summary.startedAt,
    duration_ms: summary.durationMs,
    planned: summary.plan.counts,
    applied: summary.applied,
    writes: writesOf(summary),
    by_status: summary.byStatus,
    dry_run: summary.dryRun,
    warnings: summary.plan.warnings.length,
    withheld: summary.plan.withheld.length,
    refusal: summary.plan.refusal ? { guard: summary.plan.refusal.guard, message: summary.plan.refusal.message } : null,
    failures: summary.failures.slice(0, 20),
    failures_total: summary.failures.length,
    not_started: summary.notStarted.length,
    quarantined: summary.quarantined.length,
    quarantined_by_reason: quarantineByReason,
    blocked: summary.blocked.length,
    blocked_records: summary.blocked.slice(0, 20).map((b) => ({ entity: b.entity, source_id: b.sourceId, reason: b.reason })),
    skipped_admin: summary.skippedAdmin,
    replan_rounds: summary.replanRounds,
    api_calls: summary.apiCalls,
    rate_limited: summary.rateLimited,
    ...(summary.error ? { error: summary.error } : {}),
    ...(summary.approval ? { approval: summary.approval } : {}),
    // A count, never the selectors (issue 44): one may be a person's e-mail.
    ...(summary.unmatched ? { unmatched: summary.unmatched.length } : {}),
  };
}

/** The daemon's view of a finished runOnce. */
export function runOutcomeOf(summary: RunSummary): RunOutcome {
  return {
    result: runResultOf(summary),
    exitCode: summary.exitCode,
    summary: compactSummary(summary),
    ...(summary.error ? { error: summary.error } : {}),
    ...(summary.stop && CREDENTIAL_STOPS.has(summary.stop.kind) ? { persistent: true } : {}),
  };
}

/** runOnce's observer that feeds the plan, operation, guard, source and quarantine metrics. */
export function metricsRunObserver(metrics: OrgsyncMetrics): RunObserver {
  return {
    onPlan(plan, desired) {
      OrgsyncMetrics.replace(
        metrics.planOperations,
        ENTITY_KINDS.flatMap((entity) => CHANGE_OPS.map((op) => ({ labels: { entity, op }, value: plan.counts[entity][op] }))),
      );
      const bySource = new Map<string, number>();
      const count = (source: string, entity: string, n = 1) => bySource.set(`${source}\u0000${entity}`, (bySource.get(`${source}\u0000${entity}`) ?? 0) + n);
      for (const d of desired.departments) count(d.origin?.source ?? 'unknown', 'departments');
      for (const p of desired.positions) count(p.origin?.source ?? 'unknown', 'positions');
      // Counted where the members are staged (a million are not read one by one for a gauge).
      for (const t of desired.members.tally([])) count(t.source || 'unknown', 'members', t.count);
      OrgsyncMetrics.replace(
        metrics.sourceRecords,
        [...bySource].map(([key, value]) => {
          const [source, entity] = key.split('\u0000') as [string, string];
          return { labels: { source, entity }, value };
        }),
      );
      const quarantined = new Map<string, number>();
      for (const q of desired.quarantine) quarantined.set(`${q.source}\u0000${q.reason}`, (quarantined.get(`${q.source}\u0000${q.reason}`) ?? 0) + 1);
      OrgsyncMetrics.replace(
        metrics.quarantinedRecords,
        [...quarantined].map(([key, value]) => {
          const [source, reason] = key.split('\u0000') as [string, string];
          return { labels: { source, reason }, value };
        }),
      );
      const blocked = new Map<string, number>();
      for (const b of blockedRecords(plan)) blocked.set(`${b.entity}\u0000${b.reason}`, (blocked.get(`${b.entity}\u0000${b.reason}`) ?? 0) + 1);
      OrgsyncMetrics.replace(
        metrics.blockedRecords,
        [...blocked].map(([key, value]) => {
          const [entity, reason] = key.split('\u0000') as [string, string];
          return { labels: { entity, reason }, value };
        }),
      );
      const dropped = new Map<string, number>();
      for (const w of desired.warnings ?? []) dropped.set(`${w.source}\u0000${w.code}`, (dropped.get(`${w.source}\u0000${w.code}`) ?? 0) + 1);
      OrgsyncMetrics.replace(
        metrics.sourceWarnings,
        [...dropped].map(([key, value]) => {
          const [source, code] = key.split('\u0000') as [string, string];
          return { labels: { source, code }, value };
        }),
      );
      metrics.lifecycleMembers.set({ rule: 'scheduled' }, plan.lifecycle?.scheduled.length ?? 0);
      metrics.lifecycleMembers.set({ rule: 'ended' }, plan.lifecycle?.ended.length ?? 0);
      // Removals a policy (upsert-only, create-only) or a grace period held back.
      for (const w of plan.withheld) if (w.change.op === 'remove') metrics.removalsBlockedTotal.inc({ guard: w.why.split(':')[0] ?? w.why });
    },
    onGuard(guard, plan) {
      metrics.guardRefusalsTotal.inc({ guard });
      if (guard === 'delete_threshold') metrics.deleteThresholdExceededTotal.inc();
      const removals = plan.changes.filter((c) => c.op === 'remove').length;
      if (removals > 0) metrics.removalsBlockedTotal.inc({ guard }, removals);
    },
    onChangeResult(result) {
      metrics.operationsTotal.inc({ entity: result.change.entity, op: result.change.op, result: result.status });
    },
    onStop(reason) {
      metrics.applyStopsTotal.inc({ reason: reason.kind });
      if (reason.kind === LEASE_LOST) metrics.leaseLostTotal.inc();
    },
  };
}

/** Lets the metrics read the mirror's watermarks and record counts at scrape time. */
export function mirrorProbe(mirror: Mirror): MirrorProbe {
  return {
    watermarks: () => Object.fromEntries(mirror.states().map((s) => [s.entity, s.watermark ? Date.parse(s.watermark) : undefined])),
    records: () => mirror.counts(),
  };
}

/**
 * `orgsync sync` with metrics.pushgateway_url: pushes the run's metrics (job "orgsync", instance and sync_id = sync id), since
 * Prometheus cannot scrape a short job. A failed push is logged, never fails the run.
 */
export async function pushRunMetrics(metrics: OrgsyncMetrics, config: Pick<Config, 'metrics' | 'sync'>, logger: Logger): Promise<boolean> {
  const url = config.metrics.pushgateway_url;
  if (!url) return false;
  try {
    await metrics.push(url, config.sync.id);
    logger.info({ pushgateway_url: url, job: 'orgsync', instance: config.sync.id, sync_id: config.sync.id }, 'metrics pushed to the Pushgateway');
    return true;
  } catch (err) {
    logger.warn({ pushgateway_url: url, error: err instanceof Error ? err.message : String(err) }, 'could not push metrics to the Pushgateway');
    return false;
  }
}

/**
 * The end of `orgsync sync` (one run, then exit, the CronJob entry): records the run in the run history and the
 * metrics, carries the last success over from earlier runs (a fresh process knows only its own), then pushes the
 * metrics when metrics.pushgateway_url is set.
 */
export async function finishSyncRun(
  parts: { metrics: OrgsyncMetrics; history: RunHistory; logger: Logger; config: Pick<Config, 'metrics' | 'sync'>; lastRunId?: string | undefined },
  summary: RunSummary,
  runId: string = parts.lastRunId ?? randomUUID(),
  trigger: 'once' | 'apply' = 'once',
): Promise<void> {
  const started = Date.parse(summary.startedAt);
  const finished = started + summary.durationMs;
  const outcome = runOutcomeOf(summary);
  try {
    parts.history.start(runId, trigger, started);
    parts.history.finish(runId, { finishedAt: finished, result: outcome.result, exitCode: outcome.exitCode, summary: outcome.summary, ...(outcome.error ? { error: outcome.error } : {}) });
  } catch (err) {
    parts.logger.warn({ error: err instanceof Error ? err.message : String(err) }, 'could not record the run in the state DB');
  }
  const previous = parts.history.lastWith(['success', 'partial']);
  if (previous?.finishedAt) parts.metrics.lastSuccessTimestampSeconds.set(Date.parse(previous.finishedAt) / 1000);
  const previousRun = parts.history.lastWith(['success', 'partial', 'failed', 'guard', 'interrupted']);
  if (previousRun?.finishedAt) parts.metrics.lastRunTimestampSeconds.set(Date.parse(previousRun.finishedAt) / 1000);
  parts.metrics.recordRun(outcome.result, started, finished);
  await pushRunMetrics(parts.metrics, parts.config, parts.logger);
}

/** What the issue-22 routes need from the daemon. */
interface TriggerRouteDeps {
  token(): string | undefined;
  unauthorized(): void;
  trigger(only: string[] | undefined): { status: number; body: unknown };
  run(id: string): unknown;
  recordHistory?: (selector: string) => unknown[];
}

/** POST /sync[?only=SELECTOR...] (bearer token), GET /runs/<id>, GET /records/<selector>/history. */
function triggerRoutes(deps: TriggerRouteDeps): NonNullable<OpsHandlers['extra']> {
  const notFound = (path: string) => ({ status: 404, body: { error: { code: 'not_found', message: `no route ${path}` } } });
  return ({ method, path, query, authorization }) => {
    if (path === '/sync') {
      const expected = deps.token();
      if (expected === undefined) return notFound(path);
      if (method !== 'POST') return { status: 405, body: { error: { code: 'method_not_allowed', message: 'use POST /sync' } } };
      // Compared as the read token is: both hashed first, so neither the time nor a length check tells the token's length.
      if (!tokenMatches(bearerOf(authorization), expected)) {
        deps.unauthorized();
        return { status: 401, body: { error: { code: 'unauthorized', message: 'a bearer token from daemon.trigger_token_file is required' } } };
      }
      const selectors = query.getAll('only');
      // A selector that can never match is refused at once (400), before a run starts; whether a well-formed one
      // matches needs the sources: a run that finds no record fails with the CLI's exit-2 message (GET /runs/<id>).
      for (const sel of selectors) {
        const problem = selectorProblem(sel);
        if (problem) return { status: 400, body: { error: { code: 'invalid_selector', message: selectorProblemMessage(sel, problem) } } };
      }
      const only = selectors.map((s) => s.trim());
      return deps.trigger(only.length > 0 ? only : undefined);
    }
    if (method !== 'GET') return undefined;
    const run = /^\/runs\/([^/]+)$/.exec(path);
    if (run) {
      const found = deps.run(decodeURIComponent(run[1]!));
      return found ? { status: 200, body: found } : { status: 404, body: { error: { code: 'no_run', message: `no run ${decodeURIComponent(run[1]!)}` } } };
    }
    const rec = /^\/records\/(.+)\/history$/.exec(path);
    if (rec && deps.recordHistory) {
      const selector = decodeURIComponent(rec[1]!);
      return { status: 200, body: { selector, entries: deps.recordHistory(selector) } };
    }
    return undefined;
  };
}
