import type { Command } from 'commander';
import { Option } from 'commander';
import { loadConfig } from '../../config/load.js';
import { finishSyncRun, writesOf } from '../../daemon/daemon.js';
import type { RunSummary } from '../../daemon/run-once.js';
import { CHANGE_OPS, ENTITY_KINDS } from '../../domain/index.js';
import { blockedLines, blockedToJson, planTextLines, writeLines } from '../../planner/render.js';
import { accountingLines, accountingToJson, accountRecords, type RecordAccounting } from '../../planner/report/accounting.js';
import type { DesiredState } from '../../domain/index.js';
import { combineObservers } from '../../daemon/run-once.js';
import { NOT_OWNED_ABSENT } from '../../planner/index.js';
import { EXIT, OrgsyncError, signalExitCode } from '../../shared/errors.js';
import { selectorProblem, selectorProblemMessage } from '../../planner/select.js';
import type { CliContext, CommandResult } from '../context.js';
import { openRunEnvironment } from '../../app/run-environment.js';
import { parseAllowDeletes } from './plan.js';
import { createProgressReporter } from './sync-progress.js';
import { TerminalLine } from '../../observability/terminal-line.js';

/**
 * The text summary of a sync run (README "orgsync sync"); with `records`, where every source record went (issue
 * 32), after the rest.
 */
export function renderSyncSummary(s: RunSummary, records?: RecordAccounting): string {
  const lines: string[] = [];
  const verdict: Record<RunSummary['result'], string> = {
    in_sync: 'in sync, nothing to do',
    blocked: 'nothing to apply, but source records are blocked',
    planned: 'planned',
    applied: 'applied',
    dry_run: 'dry run, nothing written',
    partial: 'finished with records failed or quarantined',
    refused: 'refused by a guard, nothing applied',
    failed: 'failed',
    stopped: 'stopped before the end',
  };
  lines.push(`sync ${s.syncId}: ${verdict[s.result]} (exit ${s.exitCode}) in ${(s.durationMs / 1000).toFixed(1)} s`);
  if (s.dryRun) lines.push(`dry run: ${writesOf(s)} changes would be applied (nothing written)`);
  lines.push(`${'entity'.padEnd(13)}${CHANGE_OPS.map((op) => op.padStart(8)).join('')}`);
  for (const e of ENTITY_KINDS) lines.push(`${e.padEnd(13)}${CHANGE_OPS.map((op) => String(s.applied[e][op]).padStart(8)).join('')}`);
  lines.push(
    `failures: ${s.failures.length}, not started: ${s.notStarted.length}, blocked: ${s.blocked.length}, quarantined: ${s.quarantined.length}, admins not removed: ${s.skippedAdmin}, warnings: ${s.plan.warnings.length}, re-plans: ${s.replanRounds}`,
  );
  lines.push(`API calls: ${s.apiCalls}, 429s: ${s.rateLimited}`);
  if (s.failures.length > 0) {
    lines.push('failed:');
    for (const f of s.failures.slice(0, 50)) lines.push(`  ${f.entity} ${f.op} ${f.thirdId || f.platformId || ''}: ${f.status}: ${f.message}`);
    if (s.failures.length > 50) lines.push(`  ... and ${s.failures.length - 50} more`);
  }
  for (const l of blockedLines(s.blocked)) if (l !== '') lines.push(l);
  const notOwned = s.plan.warnings.filter((w) => w.code === NOT_OWNED_ABSENT);
  if (notOwned.length > 0) {
    lines.push(`not owned, left alone: ${notOwned.length}`);
    for (const w of notOwned.slice(0, 50)) lines.push(`  ${w.entity} ${w.thirdId}: ${w.message}`);
    if (notOwned.length > 50) lines.push(`  ... and ${notOwned.length - 50} more`);
  }
  if (s.notStarted.length > 0) lines.push(`not started: ${s.notStarted.length} change(s) (${s.notStarted[0]!.message}); the next run plans them again`);
  if (s.notConverged.length > 0) {
    lines.push('did not converge:');
    for (const f of s.notConverged.slice(0, 50)) lines.push(`  ${f.entity} ${f.op} ${f.thirdId || f.platformId || ''}: ${f.message}`);
  }
  if (s.quarantined.length > 0) {
    lines.push('quarantined:');
    for (const q of s.quarantined.slice(0, 50)) lines.push(`  ${q.entity} ${q.source_id ?? ''} (${q.source} ${q.location}): ${q.reason}: ${q.message}`);
    if (s.quarantined.length > 50) lines.push(`  ... and ${s.quarantined.length - 50} more`);
  }
  for (const l of selectionLines(s)) lines.push(l);
  if (s.error && s.result !== 'refused') lines.push(`error: ${s.error}`);
  if (records) for (const l of accountingLines(records)) lines.push(l);
  return `${lines.join('\n')}\n`;
}

/** `--only`: one line per selected record and what was done, then what it needed first. */
export function selectionLines(s: RunSummary): string[] {
  if (!s.selection) return [];
  const lines = [`selected: ${s.selection.length} record(s)`];
  for (const r of s.selection) {
    const name = `${r.entity} ${r.thirdId || r.platformId || ''}${r.label ? ` "${r.label}"` : ''}`;
    lines.push(`  ${name}: ${r.done[0]}`);
    for (const d of r.done.slice(1)) lines.push(`  ${' '.repeat(name.length)}  ${d}`);
    for (const n of r.neededFirst) lines.push(`    needed first: ${n}`);
  }
  return lines;
}

/** The JSON summary of `orgsync sync --output json`. */
export function syncSummaryJson(s: RunSummary, records?: RecordAccounting): Record<string, unknown> {
  return {
    sync_id: s.syncId,
    result: s.result,
    exit_code: s.exitCode,
    started_at: s.startedAt,
    duration_seconds: s.durationMs / 1000,
    dry_run: s.dryRun,
    applied: s.applied,
    ...(s.dryRun ? { would_apply: { total: writesOf(s), ...s.applied } } : {}),
    failures: s.failures.map((f) => ({ id: f.id, entity: f.entity, op: f.op, third_id: f.thirdId, platform_id: f.platformId ?? null, status: f.status, message: f.message })),
    not_started: s.notStarted.length,
    not_started_changes: s.notStarted.map((f) => ({ id: f.id, entity: f.entity, op: f.op, third_id: f.thirdId, platform_id: f.platformId ?? null })),
    not_converged: s.notConverged.map((f) => ({ id: f.id, entity: f.entity, op: f.op, third_id: f.thirdId, message: f.message })),
    quarantined: s.quarantined,
    blocked: blockedToJson(s.blocked),
    not_owned: s.plan.warnings.filter((w) => w.code === NOT_OWNED_ABSENT).map((w) => ({ entity: w.entity, third_id: w.thirdId, platform_id: w.platformId ?? null, message: w.message })),
    admins_not_removed: s.skippedAdmin,
    warnings: s.plan.warnings.length,
    replan_rounds: s.replanRounds,
    api_calls: s.apiCalls,
    rate_limited: s.rateLimited,
    refusal: s.plan.refusal ?? null,
    error: s.error ?? null,
    ...(s.selection
      ? { selected: s.selection.map((r) => ({ selector: r.selector, entity: r.entity, third_id: r.thirdId, platform_id: r.platformId ?? null, name: r.label ?? null, done: r.done, needed_first: r.neededFirst })) }
      : {}),
    ...(records ? { records: accountingToJson(records) } : {}),
  };
}

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
  $ orgsync sync --config my-sync.yaml --only E1042 --only lars.okafor@demo-corp.test`,
    )
    .action((opts: { config: string; allowDeletes?: number; dryRun?: boolean; output: 'text' | 'json'; allowSourceShrink?: boolean; acceptScopeChange?: boolean; only?: string[] }) => {
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
            ctx.stdout.write(opts.output === 'json' ? `${JSON.stringify(syncSummaryJson(summary, records), null, 2)}\n` : renderSyncSummary(summary, records));
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
