import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type Database from 'better-sqlite3';
import { loadConfig, resolveConfigPath } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { isListenAddress, LISTEN_MESSAGE } from '../../config/operations.js';
import { OrgsyncError } from '../../shared/errors.js';
import { metricsRunObserver, mirrorProbe, runDaemon, runOutcomeOf, type RunSync } from '../../daemon/daemon.js';
import { combineObservers, runOnce, type RunOnceOptions, type RunSummary } from '../../daemon/run-once.js';
import { createRunApprovals, reportContextOf } from '../../daemon/approvals.js';
import { ApprovalStore } from '../../mirror/approvals.js';
import { createNotifier, type Notifier } from '../../observability/notify/index.js';
import { listenerSecurityOf } from '../../observability/route-access.js';
import { failedEvent, notifyEventsOf } from '../../daemon/notify.js';

/** How long closing an environment waits for queued notifications (bounded: a dead webhook delays exit by this at most). */
export const NOTIFY_FLUSH_MS = 3_000;
import type { Plan } from '../../domain/index.js';
import { renderPlanHtml, type PlanReportContext } from '../../planner/report/index.js';
import { planToJson } from '../../planner/render.js';
import { approvalJson } from './approvals.js';
import { CronScheduler, type Scheduler } from '../../daemon/schedule.js';
import { openStateDb, warnIfStateDbReadable } from '../../mirror/db.js';
import { explainStateDbError } from '../../mirror/db-faults.js';
import { MirrorLease, type LeaseHolder } from '../../mirror/lease.js';
import { openStateSnapshot } from '../../mirror/snapshot.js';
import type { WriteGate } from '../../applier/index.js';
import { Mirror } from '../../mirror/mirror.js';
import { OwnershipStore } from '../../mirror/ownership.js';
import { TrustStateStore } from '../../mirror/trust-state.js';
import { createRunTrust } from '../../daemon/trust.js';
import { leaseGate } from '../../daemon/fencing.js';
import { RunHistory } from '../../mirror/runs.js';
import { PhoneCacheStore } from '../../mirror/phone-cache.js';
import { readWithPhoneCache } from '../../daemon/phone-cache.js';
import { historyJson, historyKeysFor, RecordHistory } from '../../mirror/record-history.js';
import { createLogger, wantsPretty, type OrgsyncLogger } from '../../observability/logger.js';
import type { TerminalLine } from '../../observability/terminal-line.js';
import { OrgsyncMetrics } from '../../observability/metrics.js';
import { createPlatformClient, type PlatformClient } from '../../platform/client.js';
import { KEY_DROPPED_MESSAGE } from '../../platform/key-pool.js';
import { readDesiredState } from '../../sources/index.js';
import { steadyWallClock, systemClock, type Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import type { CliContext, CommandResult } from '../context.js';
import { VERSION } from '../version.js';

/** The write gate of a read-only environment: a plan is never applied from a snapshot. */
const READ_ONLY_GATE: WriteGate = {
  name: 'read_only',
  check: () => ({ kind: 'read_only', message: 'a read-only command writes nothing' }),
};

/** Everything one or many runs need, opened from a config: logger, metrics, state DB (leased), client. */
export interface RunEnvironment {
  config: Config;
  logger: OrgsyncLogger;
  metrics: OrgsyncMetrics;
  db: Database.Database;
  dbPath: string;
  mirror: Mirror;
  ownership: OwnershipStore;
  history: RunHistory;
  lease: MirrorLease;
  /** Read-only environments: another process that held the state DB's lease when the snapshot was taken. */
  leaseHolder?: LeaseHolder;
  client: PlatformClient;
  clock: Clock;
  /**
   * One runOnce with this environment's parts, fenced by the lease (taken again first when an earlier run lost it).
   * Without `run.logger` its lines carry a new run_id (see lastRunId). `signal` stops new writes; `abort` aborts
   * the requests in flight.
   */
  run(options: RunOnceOptions, run: { logger?: Logger; signal?: AbortSignal; abort?: AbortSignal; runId?: string; trigger?: string }): Promise<RunSummary>;
  /** The run_id of the last run started without its own logger (`orgsync sync` records the run under it). */
  lastRunId: string | undefined;
  /** Requests made and 429s seen by this environment's client so far (`orgsync apply` reports them). */
  callStats(): { requests: number; rateLimited: number };
  /** Releases the lease, closes the client and the state DB. */
  close(): Promise<void>;
  /** The plan of the latest run with its report context (GET /plan, /plan.json), if a run planned yet. */
  latestPlan(): { plan: Plan; context: PlanReportContext } | undefined;
  /** The pending approvals of this sync (issue 20). */
  approvals: ApprovalStore;
  /** The notify: webhooks (issue 20). */
  notifier: Notifier;
}

/** How to open a RunEnvironment. */
export interface OpenRunEnvironmentOptions {
  /** Where log lines go (stdout normally; stderr when stdout carries a document). */
  logDestination: NodeJS.WritableStream;
  /** Whether that destination is a terminal (pretty lines with log.format auto). */
  logIsTTY: boolean;
  /** The terminal's status line (sync's progress): log lines are printed above it. */
  terminal?: TerminalLine;
  clock?: Clock;
  /**
   * Read-only commands (`plan` without `--out`, `explain`): no lease, and the state DB is a private in-memory
   * snapshot (src/mirror/snapshot.ts), so they run beside a daemon or a sync that holds it and never write it; every
   * platform write is refused by a gate.
   */
  readOnly?: boolean;
}

/**
 * Opens the parts of a run from a loaded config. Takes the state DB's lease lock first, so a second process on the
 * same mirror fails here with STATE_LOCKED (exit 1) before it touches anything.
 */
export function openRunEnvironment(config: Config, ctx: Pick<CliContext, 'env'>, options: OpenRunEnvironmentOptions): RunEnvironment {
  const clock = options.clock ?? systemClock;
  const logger = createLogger({
    level: config.log.level,
    destination: options.logDestination,
    pretty: wantsPretty(config.log.format, options.logIsTTY),
    secrets: config.meta.secrets,
    redactPaths: config.log.redact,
    base: { sync_id: config.sync.id },
    personalData: config.log.personal_data,
    ...(options.terminal ? { terminal: options.terminal } : {}),
  });
  const dbPath = resolveConfigPath(config, config.state.path);
  const busyTimeoutMs = config.state.busy_timeout;
  const shutdownTimeoutMs = config.shutdown_timeout;
  const readOnly = options.readOnly === true;
  const snapshot = readOnly ? openStateSnapshot(dbPath, { now: steadyWallClock(clock), busyTimeoutMs }) : undefined;
  const db = snapshot?.db ?? openStateDb(dbPath, { busyTimeoutMs });
  warnIfStateDbReadable(dbPath, logger);
  const lease = new MirrorLease(db, { dbPath, now: steadyWallClock(clock), ttlMs: config.state.lease_ttl });
  const onLeaseLost = (): void => {
    const holder = lease.current();
    logger.error({ state_db: dbPath, holder: holder?.holder ?? null }, 'lost the state DB lease: no further write starts');
  };
  if (!readOnly) {
    try {
      lease.acquire();
    } catch (err) {
      db.close();
      throw explainStateDbError(err, dbPath, { doing: 'cannot take the state DB lease', busyTimeoutMs });
    }
    lease.startHeartbeat(onLeaseLost);
  }
  const gates = [readOnly ? READ_ONLY_GATE : leaseGate(lease)];
  const metrics = new OrgsyncMetrics({ build: { version: VERSION }, now: () => clock.now(), syncId: config.sync.id });
  const mirror = new Mirror(db);
  metrics.setMirrorProbe(mirrorProbe(mirror));
  const ownership = new OwnershipStore(db, config.sync.id);
  const history = new RunHistory(db);
  const phones = new PhoneCacheStore(db);
  const stats = { requests: 0, rateLimited: 0 };
  const observer = metrics.clientObserver();
  // The current run's logger (its run_id), for what the client reports between runs' own log lines.
  let runLog: Logger = logger;
  let client: PlatformClient;
  try {
    client = createPlatformClient(config.platform, {
      clock,
      observer: {
        onResponse: (method, route, status, seconds) => {
          stats.requests += 1;
          observer.onResponse(method, route, status, seconds);
        },
        onRetry: (reason) => observer.onRetry(reason),
        onRateLimited: () => {
          stats.rateLimited += 1;
          observer.onRateLimited();
        },
        onThrottled: (seconds) => observer.onThrottled(seconds),
        onKeyRequest: (key) => observer.onKeyRequest(key),
        onKeyRateLimited: (key) => observer.onKeyRateLimited(key),
        onKeyDropped: (key, status, code) => {
          observer.onKeyDropped(key);
          runLog.warn({ key, status, code: code || undefined, keys_left: client.activeKeys().length }, KEY_DROPPED_MESSAGE);
        },
      },
    });
  } catch (err) {
    lease.release();
    db.close();
    throw err;
  }
  const approvals = new ApprovalStore(db, config.sync.id);
  const notifier = createNotifier(readOnly ? { webhooks: [] } : config.notify, { clock, logger });
  metrics.setApprovalsProbe(() => approvals.open().map((a) => ({ guard: a.guard, createdAtMs: Date.parse(a.createdAt) })));
  let latest: { plan: Plan; context: PlanReportContext } | undefined;
  const runObserver = combineObservers(metricsRunObserver(metrics), {
    onPlan: (plan, desired) => {
      latest = { plan, context: reportContextOf(mirror, plan, desired.quarantine) };
    },
  });
  return {
    config,
    logger,
    metrics,
    db,
    dbPath,
    mirror,
    ownership,
    history,
    lease,
    ...(snapshot?.holder ? { leaseHolder: snapshot.holder } : {}),
    client,
    clock,
    lastRunId: undefined,
    approvals,
    latestPlan: () => latest,
    callStats: () => ({ ...stats }),
    run(opts, run) {
      let log = run.logger;
      let runId = opts.runId ?? run.runId;
      if (!log) {
        this.lastRunId = randomUUID();
        runId ??= this.lastRunId;
        log = logger.child({ run_id: this.lastRunId });
      }
      runLog = log;
      // A key refused in an earlier run is tried again: it may have been given its scope back.
      client.restoreKeys();
      if (!readOnly && !lease.isHeld) {
        // An earlier run lost the lease (fencing): take it again, or be refused while the other process holds it.
        lease.acquire();
        lease.startHeartbeat(onLeaseLost);
        log.info({ state_db: dbPath }, 'took the state DB lease again');
      }
      // After a shutdown signal, requests in flight get shutdown_timeout, then are aborted (the daemon passes its own).
      const abort = run.abort ?? (run.signal ? abortAfter(run.signal, shutdownTimeoutMs) : undefined);
      // Issue 20: the run's events go to the notify: webhooks (fire and forget; never blocks or fails the run).
      const previous = !readOnly && opts.mode === 'apply' && opts.dryRun !== true ? history.lastWith(['success', 'partial', 'failed', 'guard', 'interrupted'])?.result : undefined;
      const tell = (summary: RunSummary): RunSummary => {
        for (const e of notifyEventsOf(summary, runId ?? null, previous, new Date(clock.now()).toISOString())) notifier.notify(e);
        return summary;
      };
      return runOnce(
        {
          config,
          client,
          mirror,
          ownership,
          logger: log,
          clock,
          // Issue 19: libphonenumber-js verdicts of earlier runs; saved only by a run that holds the lease.
          readDesiredState: (signal) =>
            readWithPhoneCache(phones, () => !readOnly && lease.isHeld, log, (phoneCache) => readDesiredState(config, { env: ctx.env, logger: log, clock, phoneCache, ...(signal ? { signal } : {}) })),
          observer: runObserver,
          ...(run.signal ? { signal: run.signal } : {}),
          ...(abort ? { abortSignal: abort } : {}),
          writeGates: gates,
          callStats: () => ({ ...stats }),
          trust: createRunTrust(new TrustStateStore(db, config.sync.id), config, mirror),
          approvals: createRunApprovals({ store: approvals, trust: new TrustStateStore(db, config.sync.id), mirror, ownership, config }),
          ...(readOnly ? {} : { recordHistory: { store: new RecordHistory(db), runId: runId ?? randomUUID(), trigger: run.trigger ?? 'once', retentionDays: config.state.history_days } }),
        },
        runIdOf(opts, runId),
      ).then(tell, (err: unknown) => {
        if (opts.mode === 'apply' && opts.dryRun !== true && !readOnly) notifier.notify(failedEvent(config.sync.id, runId ?? null, err instanceof Error ? err.message : String(err), new Date(clock.now()).toISOString()));
        // A locked or damaged state DB is told with its path and the way out, not as an internal error.
        throw explainStateDbError(err, dbPath, { busyTimeoutMs });
      });
    },
    notifier,
    close: async () => {
      // Events of the last run get a moment to leave (the end of a `sync`); a webhook that is down costs at most that.
      await notifier.flush(NOTIFY_FLUSH_MS);
      notifier.close();
      lease.release();
      await client.close();
      db.close();
    },
  };
}

/** A signal aborted `ms` after `signal` is (an unref'd timer: it never keeps the process alive). */
export function abortAfter(signal: AbortSignal, ms: number): AbortSignal {
  const controller = new AbortController();
  const fire = (): void => {
    setTimeout(() => controller.abort(new Error(`shutdown_timeout (${ms / 1000}s) is over: request aborted`)), ms).unref();
  };
  if (signal.aborted) fire();
  else signal.addEventListener('abort', fire, { once: true });
  return controller.signal;
}

/** The run's options with its run id (the daemon's, or the one `sync` logs under). */
function runIdOf(opts: RunOnceOptions, fallback: string | undefined): RunOnceOptions {
  const runId = opts.runId ?? fallback;
  return runId === undefined ? opts : { ...opts, runId };
}

/** Test seams of `orgsync daemon` (the CLI passes none). */
export interface DaemonOverrides {
  scheduler?: Scheduler;
  clock?: Clock;
  onListening?: (url: string) => void;
  shutdownGraceMs?: number;
}

/** Runs `orgsync daemon` with a loaded config until the shutdown signal; resolves with the exit code. */
export async function daemonMain(config: Config, ctx: CliContext, listen: string, overrides: DaemonOverrides = {}): Promise<number> {
  const env = openRunEnvironment(config, ctx, { logDestination: ctx.stdout, logIsTTY: ctx.isTTY, ...(overrides.clock ? { clock: overrides.clock } : {}) });
  try {
    // The effective config, for operators at debug level; the logger redacts every secret in it.
    const { meta, ...effective } = config;
    env.logger.debug({ config: effective, file: meta.file, state_db: env.dbPath }, 'config loaded');
    const runSync: RunSync = async ({ runId, trigger, logger, stopSignal, killSignal, only, onlyJoined }) =>
      runOutcomeOf(await env.run({ mode: 'apply', ...(only ? { only } : {}), ...(onlyJoined ? { onlyJoined } : {}) }, { logger, signal: stopSignal, abort: killSignal, runId, trigger }));
    const tokenFile = config.daemon.trigger_token_file === '' ? undefined : resolveConfigPath(config, config.daemon.trigger_token_file);
    const records = new RecordHistory(env.db);
    return await runDaemon({
      runSync,
      logger: env.logger,
      metrics: env.metrics,
      history: env.history,
      scheduler: overrides.scheduler ?? new CronScheduler(config.schedule, config.timezone, env.logger),
      clock: env.clock,
      listen,
      shutdownSignal: ctx.shutdownSignal,
      stateOpen: () => env.db.open,
      info: { syncId: config.sync.id, version: VERSION, schedule: config.schedule, timezone: config.timezone },
      shutdownGraceMs: overrides.shutdownGraceMs ?? config.shutdown_timeout,
      ...(overrides.onListening ? { onListening: overrides.onListening } : {}),
      latestPlan: () => {
        const latest = env.latestPlan();
        if (!latest) return undefined;
        const waiting = latest.plan.refusal ? env.approvals.open()[0] : undefined;
        const context = waiting ? { ...latest.context, approval: { digest: waiting.digest, status: waiting.status } } : latest.context;
        return { html: renderPlanHtml(latest.plan, context), json: planToJson(latest.plan, { quarantine: latest.context.quarantine ?? [] }) };
      },
      pendingApprovals: () => env.approvals.open().map(approvalJson),
      ...(tokenFile ? { triggerToken: () => readTriggerToken(tokenFile, env.logger) } : {}),
      recordHistory: (selector) => records.entries(historyKeysFor(selector, env.mirror, env.ownership.ownedMembers())).map(historyJson),
      listenerSecurity: listenerSecurityOf(config, env.logger),
    });
  } finally {
    await env.close();
  }
}

/** `orgsync daemon`. */
export function registerDaemonCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  program
    .command('daemon')
    .description(
      'Run as a long-lived process: one sync at start, then one per `schedule` (cron, in `timezone`), never two at once. Serves /metrics, /healthz, /readyz and /status on metrics.listen. SIGTERM/SIGINT: stop scheduling, start no new write or retry, give requests in flight shutdown_timeout (default 20s) and then abort them, record what is known, exit 143 (SIGTERM) or 130 (SIGINT).',
    )
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .option('--listen <host:port>', 'override metrics.listen ("" turns the listener off)')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync daemon --config my-sync.yaml                      # runs until Ctrl-C
  $ orgsync daemon -c my-sync.yaml --listen 127.0.0.1:9464    # runs until Ctrl-C; meanwhile:
  $ curl -s localhost:9464/status      # the last runs and their summaries
  $ curl -s localhost:9464/metrics     # Prometheus metrics (orgsync_*)

Logs are JSON lines on stdout (readable lines on a terminal), one run_id on every line of a run.
A second process on the same state DB is refused (exit 1): the lease lock keeps one process per mirror.`,
    )
    .action((opts: { config: string; listen?: string }) => {
      setResult(
        (async () => {
          if (opts.listen !== undefined && !isListenAddress(opts.listen)) {
            throw new OrgsyncError('USAGE', `--listen "${opts.listen}": ${LISTEN_MESSAGE} (the same as metrics.listen)`);
          }
          const config = loadConfig(opts.config, ctx.env);
          return daemonMain(config, ctx, opts.listen ?? config.metrics.listen);
        })(),
      );
    });
}

/**
 * The trigger token, read from daemon.trigger_token_file at each request (a rotated Secret applies at once). An
 * unreadable or empty file refuses every trigger (the empty string never matches a token) and is logged.
 */
function readTriggerToken(file: string, logger: Logger): string {
  try {
    const token = readFileSync(file, 'utf8').trim();
    if (token === '') logger.error({ file }, 'daemon.trigger_token_file is empty: every trigger is refused');
    return token === '' ? `\u0000unset:${randomUUID()}` : token;
  } catch (err) {
    logger.error({ file, error: (err as NodeJS.ErrnoException).code ?? String(err) }, 'cannot read daemon.trigger_token_file: every trigger is refused');
    return `\u0000unset:${randomUUID()}`;
  }
}
