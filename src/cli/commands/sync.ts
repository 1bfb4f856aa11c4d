import type { Command } from 'commander';
import { Option } from 'commander';
import { loadConfig } from '../../config/load.js';
import { finishSyncRun } from '../../daemon/daemon.js';
import type { RunSummary } from '../../daemon/run-once.js';
import { planTextLines, writeLines } from '../../planner/render.js';
import { accountRecords } from '../../planner/report/accounting.js';
import type { DesiredState } from '../../domain/index.js';
import { combineObservers } from '../../daemon/run-once.js';
import { EXIT, OrgsyncError, signalExitCode } from '../../shared/errors.js';
import { selectorProblem, selectorProblemMessage } from '../../planner/select.js';
import type { CliContext, CommandResult } from '../context.js';
import { openRunEnvironment } from '../../app/run-environment.js';
import { parseAllowDeletes } from '../options.js';
import { renderSyncSummary, syncSummaryJsonChunks } from '../sync-summary.js';
import { createProgressReporter } from './sync-progress.js';
import { TerminalLine } from '../../observability/terminal-line.js';

/** `orgsync sync --config F`: one run: refresh, plan, apply, summary. */
export function registerSyncCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  program
    .command('sync')
    .description('Run once: refresh the mirror, read the sources, plan, apply, and print a summary.')
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .option('--allow-deletes <n>', 'permit up to N removals in this run even over sync.delete_threshold', parseAllowDeletes)
    .option('--dry-run', 'go through the applier without writing anything: "dry run: N changes would be applied (nothing written)"; recorded as a dry run')
    .option('--allow-source-shrink', 'accept sources that shrank beyond sync.max_source_shrink_percent since the last good read')
    .option('--accept-scope-change', 'accept removals after a change of the config\'s scope (sources, filters, base DNs)')
    .option('--only <selector>', 'sync only this record (a source id, an e-mail or a department path) and what it needs first; repeatable', collectSelector)
    .option('--full-read', 'read every source in full, also those read by delta (members.delta, Graph /users/delta, BambooHR changed-since), and save a fresh snapshot')
    .addOption(new Option('-o, --output <format>', 'summary format').choices(['text', 'json']).default('text'))
    .addHelpText(
      'after',
      `
Exit codes: 0 in sync (or everything applied; removals still inside sync.removal_grace are only reported),
1 failed, 2 config or usage error, 3 stopped by a guard: delete threshold, source shrink, scope change or state_lost (the plan is
printed, nothing applied), 4 finished with some records failed or quarantined.

Examples:
  $ orgsync sync --config my-sync.yaml
  $ orgsync sync --config my-sync.yaml --allow-deletes 40
  $ orgsync sync --config my-sync.yaml --only E1042 --only lars.okafor@demo-corp.test
  $ orgsync sync --config my-sync.yaml --full-read`,
    )
    .action((opts: { config: string; allowDeletes?: number; dryRun?: boolean; output: 'text' | 'json'; allowSourceShrink?: boolean; acceptScopeChange?: boolean; only?: string[]; fullRead?: boolean }) => {
      setResult(
        (async () => {
          // A selector that can never match is a usage error before anything is read (exit 2).
          for (const sel of opts.only ?? []) {
            const problem = selectorProblem(sel);
            if (problem) throw new OrgsyncError('USAGE', selectorProblemMessage(sel, problem));
          }
          const config = loadConfig(opts.config, ctx.env);
          // On a terminal one status line (the progress) with log lines printed above it; the summary comes last.
          const terminal = ctx.isTTY ? new TerminalLine(ctx.stderr) : undefined;
          const env = openRunEnvironment(config, ctx, { logDestination: ctx.stderr, logIsTTY: ctx.isTTY, ...(terminal ? { terminal } : {}) });
          const progress = createProgressReporter({ tty: ctx.isTTY, stream: ctx.stderr, logger: env.logger, ...(terminal ? { terminal } : {}), runId: () => env.lastRunId });
          let desired: DesiredState | undefined;
          try {
            const summary = await env.run(
              {
                mode: 'apply',
                dryRun: opts.dryRun === true,
                observer: combineObservers(progress.observer, { onPlan: (_p, d) => (desired = d) }),
                allowSourceShrink: opts.allowSourceShrink === true,
                acceptScopeChange: opts.acceptScopeChange === true,
                ...(opts.fullRead ? { fullRead: true } : {}),
                ...(opts.only ? { only: opts.only } : {}),
                ...(opts.allowDeletes !== undefined ? { allowDeletes: opts.allowDeletes } : {}),
              },
              { signal: ctx.shutdownSignal },
            );
            progress.stop();
            await finishSyncRun(env, summary);
            // Stopped by SIGINT/SIGTERM: the process exits 130/143 (see main), and its summary says the same.
            const bySignal = ctx.shutdownSignal.aborted ? signalExitCode(ctx.shutdownSignal.reason) : undefined;
            if (bySignal !== undefined && summary.result === 'stopped') summary.exitCode = bySignal as RunSummary['exitCode'];
            if (summary.result === 'refused') {
              // Nothing was applied: show what would have been, and why it was refused.
              if (opts.output === 'text') writeLines(planTextLines(summary.plan, { quarantine: summary.quarantined }), (chunk) => ctx.stdout.write(chunk));
              ctx.stderr.write(`orgsync: ${summary.error ?? 'refused by a guard'}\n`);
            } else if (summary.exitCode === EXIT.FAILED && summary.error) {
              ctx.stderr.write(`orgsync: ${summary.error}\n`);
            }
            // Every source record, planned or left alone (issue 32); an `--only` run plans a part, so it has none.
            const records = desired && !summary.selection ? accountRecords(summary.plan, desired) : undefined;
            if (opts.output === 'json') for (const chunk of syncSummaryJsonChunks(summary, records)) ctx.stdout.write(chunk);
            else ctx.stdout.write(renderSyncSummary(summary, records));
            return summary.exitCode;
          } finally {
            progress.stop();
            await env.close();
          }
        })(),
      );
    });
}

/** `--only` is repeatable: each occurrence adds a selector. */
function collectSelector(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
