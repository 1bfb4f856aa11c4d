import { listenerSecurityOf, tokenFileReader } from '../../observability/route-access.js';
import type { Command } from 'commander';
import { openRunEnvironment } from '../../app/run-environment.js';
import { VERSION } from '../../app/version.js';
import { loadConfig } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { isListenAddress, LISTEN_MESSAGE } from '../../config/operations.js';
import { approvalJson } from '../../daemon/approvals.js';
import { runDaemon, runOutcomeOf, type RunSync } from '../../daemon/daemon.js';
import { daemonOptionsFrom } from '../../daemon/pipeline/options.js';
import type { Scheduler } from '../../daemon/schedule.js';
import { historyJson, historyKeysFor, RecordHistory } from '../../mirror/record-history.js';
import { planJsonChunks } from '../../planner/render.js';
import { renderPlanHtml } from '../../planner/report/index.js';
import type { Clock } from '../../shared/clock.js';
import { OrgsyncError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { CliContext, CommandResult } from '../context.js';

/** Test seams of `orgsync daemon` (the CLI passes none). */
export interface DaemonOverrides {
  scheduler?: Scheduler;
  clock?: Clock;
  onListening?: (url: string) => void;
  shutdownGraceMs?: number;
}

/** The daemon's cron schedule; node-cron is loaded here, by the daemon only, not by every command that registers. */
async function cronScheduler(expression: string, timezone: string, logger: Logger): Promise<Scheduler> {
  const { CronScheduler } = await import('../../daemon/schedule.js');
  return new CronScheduler(expression, timezone, logger);
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
    const settings = daemonOptionsFrom(config);
    const tokenFile = settings.triggerTokenFile;
    const records = new RecordHistory(env.db);
    return await runDaemon({
      runSync,
      logger: env.logger,
      metrics: env.metrics,
      history: env.history,
      scheduler: overrides.scheduler ?? (await cronScheduler(settings.schedule, settings.timezone, env.logger)),
      clock: env.clock,
      listen,
      shutdownSignal: ctx.shutdownSignal,
      stateOpen: () => env.db.open,
      info: { syncId: settings.syncId, version: VERSION, schedule: settings.schedule, timezone: settings.timezone },
      shutdownGraceMs: overrides.shutdownGraceMs ?? settings.shutdownGraceMs,
      ...(overrides.onListening ? { onListening: overrides.onListening } : {}),
      latestPlan: () => {
        const latest = env.latestPlan();
        if (!latest) return undefined;
        const waiting = latest.plan.refusal ? env.approvals.open()[0] : undefined;
        const context = waiting ? { ...latest.context, approval: { digest: waiting.digest, status: waiting.status } } : latest.context;
        // Rendered per request, the JSON in chunks (issue 31: a million changes are more JSON than one string holds).
        return { renderHtml: () => renderPlanHtml(latest.plan, context), jsonChunks: () => planJsonChunks(latest.plan, { quarantine: latest.context.quarantine ?? [] }) };
      },
      pendingApprovals: () => env.approvals.open().map(approvalJson),
      ...(tokenFile ? { triggerToken: tokenFileReader(tokenFile, 'daemon.trigger_token_file', env.logger, env.clock) } : {}),
      recordHistory: (selector) => records.entries(historyKeysFor(selector, env.mirror, env.ownership)).map(historyJson),
      listenerSecurity: listenerSecurityOf(config, env.logger, env.clock),
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
          return daemonMain(config, ctx, opts.listen ?? daemonOptionsFrom(config).listen);
        })(),
      );
    });
}
