import { randomUUID } from 'node:crypto';
import { openMemberStage } from '../../mirror/member-stage.js';
import type { Command } from 'commander';
import { Option } from 'commander';
import { loadConfig } from '../../config/load.js';
import { finishSyncRun } from '../../daemon/daemon.js';
import { RecordHistory } from '../../mirror/record-history.js';
import { applySavedPlan } from '../../daemon/apply-saved-plan.js';
import { TrustStateStore } from '../../mirror/trust-state.js';
import { readDesiredState } from '../../sources/index.js';
import { EXIT } from '../../shared/errors.js';
import type { CliContext, CommandResult } from '../context.js';
import { openRunEnvironment } from '../../app/run-environment.js';
import { renderSyncSummary, syncSummaryJsonChunks } from '../sync-summary.js';
import { createProgressReporter } from './sync-progress.js';

/**
 * `orgsync apply <plan-file> --config F`: executes exactly the plan saved by `orgsync plan --out`, after checking
 * that the file was not edited and that neither the platform nor the sources changed since (else exit 2).
 */
export function registerApplyCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  program
    .command('apply')
    .description('Apply a plan saved by `orgsync plan --out FILE`: exactly its changes, refused if it was edited or if the platform or the sources changed since.')
    .argument('<plan-file>', 'the file written by `orgsync plan --out`')
    .requiredOption('-c, --config <file>', 'config file (YAML); the same state DB the plan was made with')
    .addOption(new Option('-o, --output <format>', 'summary format').choices(['text', 'json']).default('text'))
    .addHelpText(
      'after',
      `
Exit codes: 0 everything applied, 1 failed, 2 refused (the file was edited, the platform or the sources changed
since the plan was made, or a config/usage error), 3 the saved plan had been refused by a guard, 4 finished with
some records failed or quarantined.

Examples:
  $ orgsync plan  --config my-sync.yaml --out plan.json     # job 1: review plan.json
  $ orgsync apply plan.json --config my-sync.yaml           # job 2, after approval`,
    )
    .action((file: string, opts: { config: string; output: 'text' | 'json' }) => {
      setResult(
        (async () => {
          const config = loadConfig(opts.config, ctx.env);
          const env = openRunEnvironment(config, ctx, { logDestination: ctx.stderr, logIsTTY: ctx.isTTY });
          const progress = createProgressReporter({ tty: ctx.isTTY, stream: ctx.stderr, logger: env.logger });
          // Issue 22: the plan's writes go into the per-record history under this run's id (trigger apply).
          const runId = randomUUID();
          try {
            const summary = await applySavedPlan(
              {
                config,
                client: env.client,
                mirror: env.mirror,
                ownership: env.ownership,
                trust: new TrustStateStore(env.db, config.sync.id),
                logger: env.logger,
                clock: env.clock,
                readDesiredState: (signal) => readDesiredState(config, { env: ctx.env, logger: env.logger, clock: env.clock, stage: openMemberStage(env.db), ...(signal ? { signal } : {}) }),
                signal: ctx.shutdownSignal,
                observer: progress.observer,
                callStats: env.callStats,
                recordHistory: { store: new RecordHistory(env.db), runId, trigger: 'apply', retentionDays: env.state.historyDays },
              },
              file,
            );
            progress.stop();
            // Like a sync: a run-history row (trigger apply), the run metrics, and a Pushgateway push when configured.
            await finishSyncRun(env, summary, runId, 'apply');
            if (summary.exitCode === EXIT.FAILED && summary.error) ctx.stderr.write(`orgsync: ${summary.error}\n`);
            if (opts.output === 'json') for (const chunk of syncSummaryJsonChunks(summary)) ctx.stdout.write(chunk);
            else ctx.stdout.write(renderSyncSummary(summary));
            return summary.exitCode;
          } finally {
            progress.stop();
            await env.close();
          }
        })(),
      );
    });
}
