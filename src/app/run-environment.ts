/**
 * The composition root of the commands that read or write the platform: opens the logger, the metrics registry, the
 * state DB (taking its lease), the mirror, ownership, trust and approval stores and the platform client from a loaded
 * config, and runs the pipeline (src/daemon/run-once.ts) with them. Every option comes from one named builder of
 * src/daemon/pipeline/options.ts.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Config } from '../config/schema.js';
import { INSECURE_TRANSPORT_KEY, insecureTransportWarnings } from '../config/transport.js';
import { throughSeam, type WriteGate } from '../applier/index.js';
import { createRunApprovals, reportContextOf } from '../daemon/approvals.js';
import { metricsRunObserver, mirrorProbe } from '../daemon/daemon.js';
import { leaseGate } from '../daemon/fencing.js';
import { failedEvent, notifyEventsOf } from '../daemon/notify.js';
import type { OwnershipCommandDeps } from '../daemon/ownership-commands.js';
import { readWithPhoneCache } from '../daemon/phone-cache.js';
import { logOptionsFrom, shutdownTimeoutMsFrom, stateDbOptionsFrom, type StateDbSettings } from '../daemon/pipeline/options.js';
import { readWithSnapshots } from '../daemon/pipeline/read-sources.js';
import { combineObservers, runOnce, type RunObserver, type RunOnceOptions, type RunSummary } from '../daemon/run-once.js';
import { createRunTrust } from '../daemon/trust.js';
import type { Plan } from '../domain/index.js';
import { ApprovalStore } from '../mirror/approvals.js';
import { openStateDb, warnIfStateDbReadable } from '../mirror/db.js';
import { explainStateDbError } from '../mirror/db-faults.js';
import { MirrorLease, type LeaseHolder } from '../mirror/lease.js';
import { Mirror } from '../mirror/mirror.js';
import { openMemberStage } from '../mirror/member-stage.js';
import { OwnershipStore } from '../mirror/ownership.js';
import { PhoneCacheStore } from '../mirror/phone-cache.js';
import { RecordHistory } from '../mirror/record-history.js';
import type { RunRecordResult } from '../mirror/runs.js';
import { RunHistory } from '../mirror/runs.js';
import { openStateSnapshot } from '../mirror/snapshot.js';
import { TrustStateStore } from '../mirror/trust-state.js';
import { createLogger, wantsPretty, type OrgsyncLogger } from '../observability/logger.js';
import { OrgsyncMetrics } from '../observability/metrics.js';
import { createNotifier, type Notifier } from '../observability/notify/index.js';
import type { NotifyEvent } from '../observability/notify/index.js';
import type { TerminalLine } from '../observability/terminal-line.js';
import { createPlatformClient, type PlatformClient } from '../platform/client.js';
import { KEY_DROPPED_MESSAGE } from '../platform/key-pool.js';
import type { PlanReportContext } from '../planner/report/index.js';
import { steadyWallClock, systemClock, type Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { recordedMessage } from '../shared/errors.js';
import { VERSION } from './version.js';

/** How long closing an environment waits for queued notifications (bounded: a dead webhook delays exit by this at most). */
export const NOTIFY_FLUSH_MS = 3_000;

/** The write gate of a read-only environment: a plan is never applied from a snapshot. */
const READ_ONLY_GATE: WriteGate = {
  name: 'read_only',
  check: () => ({ kind: 'read_only', message: 'a read-only command writes nothing' }),
};

/** How one run of an environment is started (`RunEnvironment.run`). */
export interface EnvironmentRun {
  logger?: Logger;
  signal?: AbortSignal;
  abort?: AbortSignal;
  runId?: string;
  trigger?: string;
}

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
  /** The state DB's options (path, busy timeout, lease TTL, history days). */
  state: StateDbSettings;
  /**
   * One runOnce with this environment's parts, fenced by the lease (taken again first when an earlier run lost it).
   * Without `run.logger` its lines carry a new run_id (see lastRunId). `signal` stops new writes; `abort` aborts
   * the requests in flight.
   */
  run(options: RunOnceOptions, run: EnvironmentRun): Promise<RunSummary>;
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

/** The state DB of an environment: leased (its heartbeat started), or a read-only snapshot. */
interface OpenedState {
  db: Database.Database;
  lease: MirrorLease;
  holder: LeaseHolder | undefined;
  /** Takes the lease (again, after a run lost it) and starts its heartbeat. */
  take(): void;
  /** Closes the state DB (a read-only snapshot: and removes its private copy). */
  close(): void;
}

/** Opens the state DB and takes its lease, or (read-only) opens a private snapshot of it. */
function openState(settings: StateDbSettings, clock: Clock, logger: Logger, readOnly: boolean): OpenedState {
  const { path: dbPath, busyTimeoutMs } = settings;
  const snapshot = readOnly ? openStateSnapshot(dbPath, { now: steadyWallClock(clock), busyTimeoutMs }) : undefined;
  const db = snapshot?.db ?? openStateDb(dbPath, { busyTimeoutMs });
  warnIfStateDbReadable(dbPath, logger);
  const lease = new MirrorLease(db, { dbPath, now: steadyWallClock(clock), ttlMs: settings.leaseTtlMs });
  const onLeaseLost = (): void => {
    const holder = lease.current();
    logger.error({ state_db: dbPath, holder: holder?.holder ?? null }, 'lost the state DB lease: no further write starts');
  };
  const take = (): void => {
    lease.acquire();
    lease.startHeartbeat(onLeaseLost);
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
  return { db, lease, holder: snapshot?.holder, take, close: () => (snapshot ? snapshot.close() : db.close()) };
}

/** The platform client, counting requests and 429s and feeding the metrics; a dropped key is logged on `log()`. */
function openClient(config: Config, clock: Clock, metrics: OrgsyncMetrics, log: () => Logger): { client: PlatformClient; stats: { requests: number; rateLimited: number } } {
  const stats = { requests: 0, rateLimited: 0 };
  const observer = metrics.clientObserver();
  const client: PlatformClient = createPlatformClient(config.platform, {
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
        log().warn({ key, status, code: code || undefined, keys_left: client.activeKeys().length }, KEY_DROPPED_MESSAGE);
      },
    },
  });
  return { client, stats };
}

/** What a run of an environment is built from (the environment's parts, fixed when it was opened). */
interface RunWiring {
  config: Config;
  env: Pick<RunEnvironment, 'client' | 'mirror' | 'ownership' | 'history' | 'lease' | 'db' | 'dbPath' | 'clock' | 'notifier' | 'approvals' | 'callStats'>;
  ctx: { env: Record<string, string | undefined> };
  state: OpenedState;
  readOnly: boolean;
  phones: PhoneCacheStore;
  observer: RunObserver | undefined;
  gates: readonly WriteGate[];
  shutdownTimeoutMs: number;
  busyTimeoutMs: number;
  historyDays: number;
}

/** Notifies the run's events (issue 20): fire and forget, never blocking or failing the run; a dry run notifies nothing. */
function runNotifier(notifier: Notifier, dryRun: boolean): (e: NotifyEvent) => void {
  return throughSeam(
    dryRun,
    () => (e: NotifyEvent) => notifier.notify(e),
    () => () => undefined,
  );
}

/** One run in the environment `w`, logging on `log` under `runId`. */
function runIn(w: RunWiring, opts: RunOnceOptions, run: EnvironmentRun, log: Logger, runId: string | undefined): Promise<RunSummary> {
  const { config, env, state, readOnly } = w;
  const { clock } = env;
  // A key refused in an earlier run is tried again: it may have been given its scope back.
  env.client.restoreKeys();
  if (!readOnly && !state.lease.isHeld) {
    // An earlier run lost the lease (fencing): take it again, or be refused while the other process holds it.
    state.take();
    log.info({ state_db: env.dbPath }, 'took the state DB lease again');
  }
  // After a shutdown signal, requests in flight get shutdown_timeout, then are aborted (the daemon passes its own).
  const abort = run.abort ?? (run.signal ? abortAfter(run.signal, w.shutdownTimeoutMs) : undefined);
  const notify = runNotifier(env.notifier, opts.dryRun === true);
  const previous: RunRecordResult | undefined = !readOnly && opts.mode === 'apply' ? env.history.lastWith(['success', 'partial', 'failed', 'guard', 'interrupted'])?.result : undefined;
  const trustStore = new TrustStateStore(env.db, config.sync.id);
  return runOnce(
    {
      config,
      client: env.client,
      mirror: env.mirror,
      ownership: env.ownership,
      logger: log,
      clock,
      // Issue 19: libphonenumber-js verdicts of earlier runs; saved only by a run that holds the lease.
      // Issue 31: delta-capable sources read with the state DB's snapshots (saved only by a run that holds the lease).
      // Issue 42: the members staged in the state DB connection's temporary tables, a new stage each run.
      readDesiredState: (signal, reads) =>
        readWithPhoneCache(w.phones, () => !readOnly && state.lease.isHeld, log, (phoneCache) =>
          readWithSnapshots(
            config,
            { env: w.ctx.env, logger: log, clock, phoneCache, stage: openMemberStage(env.db), ...(signal ? { signal } : {}) },
            { db: env.db, fullRead: opts.fullRead === true, mayWrite: () => !readOnly && state.lease.isHeld, reads },
          ),
        ),
      ...(w.observer ? { observer: w.observer } : {}),
      ...(run.signal ? { signal: run.signal } : {}),
      ...(abort ? { abortSignal: abort } : {}),
      writeGates: w.gates,
      callStats: env.callStats,
      trust: createRunTrust(trustStore, config, env.mirror),
      approvals: createRunApprovals({ store: env.approvals, trust: trustStore, mirror: env.mirror, ownership: env.ownership, config }),
      ...(readOnly ? {} : { recordHistory: { store: new RecordHistory(env.db), runId: runId ?? randomUUID(), trigger: run.trigger ?? 'once', retentionDays: w.historyDays } }),
    },
    runIdOf(opts, runId),
  ).then(
    (summary) => {
      for (const e of notifyEventsOf(summary, runId ?? null, previous, new Date(clock.now()).toISOString())) notify(e);
      return summary;
    },
    (err: unknown) => {
      // As recorded (issue 44): a webhook body never carries a trigger's selector (it may be a person's e-mail).
      if (opts.mode === 'apply') notify(failedEvent(config.sync.id, runId ?? null, recordedMessage(err), new Date(clock.now()).toISOString()));
      // A locked or damaged state DB is told with its path and the way out, not as an internal error.
      throw explainStateDbError(err, env.dbPath, { busyTimeoutMs: w.busyTimeoutMs });
    },
  );
}

/**
 * Opens the parts of a run from a loaded config. Takes the state DB's lease lock first, so a second process on the
 * same mirror fails here with STATE_LOCKED (exit 1) before it touches anything.
 */
export function openRunEnvironment(config: Config, ctx: { env: Record<string, string | undefined> }, options: OpenRunEnvironmentOptions): RunEnvironment {
  const clock = options.clock ?? systemClock;
  const logOptions = logOptionsFrom(config);
  const logger = createLogger({ ...logOptions, destination: options.logDestination, pretty: wantsPretty(logOptions.format, options.logIsTTY), ...(options.terminal ? { terminal: options.terminal } : {}) });
  // Issue 44: a config that lets a credential cross the network in clear says so at every start, loudly.
  for (const warning of insecureTransportWarnings(config)) logger.warn({ setting: INSECURE_TRANSPORT_KEY, warning }, 'allow_insecure_transport: a credential crosses the network in clear');
  const stateSettings = stateDbOptionsFrom(config);
  const readOnly = options.readOnly === true;
  const state = openState(stateSettings, clock, logger, readOnly);
  const { db, lease } = state;
  const metrics = new OrgsyncMetrics({ build: { version: VERSION }, now: () => clock.now(), syncId: config.sync.id });
  const mirror = new Mirror(db);
  metrics.setMirrorProbe(mirrorProbe(mirror));
  const ownership = new OwnershipStore(db, config.sync.id);
  const phones = new PhoneCacheStore(db);
  const gates = [readOnly ? READ_ONLY_GATE : leaseGate(lease)];
  const shutdownTimeoutMs = shutdownTimeoutMsFrom(config);
  // The current run's logger (its run_id), for what the client reports between runs' own log lines.
  let runLog: Logger = logger;
  let opened: ReturnType<typeof openClient>;
  try {
    opened = openClient(config, clock, metrics, () => runLog);
  } catch (err) {
    lease.release();
    state.close();
    throw err;
  }
  const { client, stats } = opened;
  const approvals = new ApprovalStore(db, config.sync.id);
  const notifier = createNotifier(readOnly ? { webhooks: [] } : config.notify, { clock, logger });
  metrics.setApprovalsProbe(() => approvals.open().map((a) => ({ guard: a.guard, createdAtMs: Date.parse(a.createdAt) })));
  let latest: { plan: Plan; context: PlanReportContext } | undefined;
  const observer = combineObservers(metricsRunObserver(metrics), {
    onPlan: (plan, desired) => {
      latest = { plan, context: reportContextOf(mirror, plan, desired.quarantine) };
    },
  });
  const env: RunEnvironment = {
    config,
    logger,
    metrics,
    db,
    dbPath: stateSettings.path,
    mirror,
    ownership,
    history: new RunHistory(db),
    lease,
    ...(state.holder ? { leaseHolder: state.holder } : {}),
    client,
    clock,
    state: stateSettings,
    lastRunId: undefined,
    approvals,
    latestPlan: () => latest,
    callStats: () => ({ ...stats }),
    run(opts, run) {
      let log = run.logger;
      let runId = opts.runId ?? run.runId;
      if (!log) {
        env.lastRunId = randomUUID();
        runId ??= env.lastRunId;
        log = logger.child({ run_id: env.lastRunId });
      }
      runLog = log;
      const wiring: RunWiring = { config, env, ctx, state, readOnly, phones, observer, gates, shutdownTimeoutMs, busyTimeoutMs: stateSettings.busyTimeoutMs, historyDays: stateSettings.historyDays };
      return runIn(wiring, opts, run, log, runId);
    },
    notifier,
    close: async () => {
      // Events of the last run get a moment to leave (the end of a `sync`); a webhook that is down costs at most that.
      await notifier.flush(NOTIFY_FLUSH_MS);
      notifier.close();
      lease.release();
      await client.close();
      state.close();
    },
  };
  return env;
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

/** The parts of the ownership commands (`adopt`, `release`), from a run environment. */
export function ownershipDeps(env: RunEnvironment, ctx: { shutdownSignal: AbortSignal }): OwnershipCommandDeps {
  return {
    config: env.config,
    client: env.client,
    mirror: env.mirror,
    ownership: env.ownership,
    trust: new TrustStateStore(env.db, env.config.sync.id),
    logger: env.logger,
    clock: env.clock,
    signal: ctx.shutdownSignal,
  };
}
