import type { Command } from 'commander';
import { Option } from 'commander';
import { loadConfig } from '../../config/load.js';
import { planJsonChunks, planTextLines, ROWS_PER_GROUP, writeLines } from '../../planner/render.js';
import { accountRecords } from '../../planner/report/accounting.js';
import { EXIT } from '../../shared/errors.js';
import { parseAllowDeletes } from '../options.js';
import type { CliContext, CommandResult } from '../context.js';
import { openRunEnvironment } from '../../app/run-environment.js';
import { savePlan } from '../../daemon/saved-plan.js';
import type { DesiredState } from '../../domain/index.js';
import { TrustStateStore } from '../../mirror/trust-state.js';
import { withoutLeaseNote } from '../../mirror/snapshot.js';
import { HTML_ROWS_PER_TABLE, renderPlanHtml } from '../../planner/report/index.js';
import { writePrivateFile } from '../../shared/private-file.js';
import { OrgsyncError } from '../../shared/errors.js';

/** Writes the HTML report (`plan --output html --out FILE`). */
function writeReport(file: string, html: string): void {
  try {
    writePrivateFile(file, html);
  } catch (err) {
    throw new OrgsyncError('USAGE', `cannot write the plan report ${file}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * `orgsync plan --config F [--output text|json]`: refreshes the mirror, reads the sources and prints the plan without
 * writing. Stdout carries only the plan (with json exactly one document); logs go to stderr.
 */
export function registerPlanCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  program
    .command('plan')
    .description('Refresh the mirror, read the sources and print what a sync would change (nothing is written to the platform).')
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .addOption(new Option('-o, --output <format>', 'text: a table per entity and operation; json: one JSON document; html: the plan report, one self-contained HTML page (with --out FILE: written to FILE)').choices(['text', 'json', 'html']).default('text'))
    .option('--allow-deletes <n>', 'plan as a sync with --allow-deletes N would (the delete threshold then permits up to N removals)', parseAllowDeletes)
    .option('--detailed-exitcode', 'exit 0 when in sync and 5 when changes are pending or source records are blocked (3 when a guard refuses)')
    .option('--out <file>', 'also write the plan, signed, with hashes of the mirror and source state, for `orgsync apply <file>` (takes the state DB\'s lease; without --out plan reads a snapshot and runs beside a daemon); with --output html: write the HTML report to <file> instead (no lease: the report is no saved plan)')
    .option('--full', `text and html output: list every change (by default at most ${ROWS_PER_GROUP} rows per entity and operation in text, ${HTML_ROWS_PER_TABLE} per table in html, with a count of the rest; json always lists every change)`)
    .option('--allow-source-shrink', 'plan as `sync --allow-source-shrink` would')
    .option('--accept-scope-change', 'plan as `sync --accept-scope-change` would')
    .addHelpText(
      'after',
      `
Exit codes: 0 planned (or in sync), 1 failed, 2 config or usage error, 3 a guard refused the plan (delete threshold,
source shrink, scope change, state_lost: the state DB was lost while the platform holds records this sync manages),
5 changes pending or source records blocked (only with --detailed-exitcode).

Examples:
  $ orgsync plan --config my-sync.yaml
  $ orgsync plan --config my-sync.yaml --output json > plan.json
  $ orgsync plan --config my-sync.yaml --out plan.json     # review it, then: orgsync apply plan.json --config my-sync.yaml
  $ orgsync plan --config my-sync.yaml --output html --out plan.html`,
    )
    .action((opts: { config: string; output: 'text' | 'json' | 'html'; allowDeletes?: number; detailedExitcode?: boolean; out?: string; full?: boolean; allowSourceShrink?: boolean; acceptScopeChange?: boolean }) => {
      setResult(
        (async () => {
          const config = loadConfig(opts.config, ctx.env);
          // Without --out (or with --out naming the HTML report) a plan writes nothing: no lease, a snapshot of the state DB (runs beside a daemon or a sync).
          const readOnly = opts.out === undefined || opts.output === 'html';
          const env = openRunEnvironment(config, ctx, { logDestination: ctx.stderr, logIsTTY: false, readOnly });
          if (env.leaseHolder) ctx.stderr.write(withoutLeaseNote('plan', env.dbPath, env.leaseHolder));
          try {
            let desired: DesiredState | undefined;
            const summary = await env.run(
              {
                mode: 'plan',
                ...(opts.allowDeletes !== undefined ? { allowDeletes: opts.allowDeletes } : {}),
                allowSourceShrink: opts.allowSourceShrink === true,
                acceptScopeChange: opts.acceptScopeChange === true,
                observer: { onPlan: (_plan, d) => (desired = d) },
              },
              { signal: ctx.shutdownSignal },
            );
            if (opts.output === 'html') {
              const latest = env.latestPlan();
              const html = renderPlanHtml(summary.plan, latest?.context ?? { quarantine: summary.quarantined }, { full: opts.full === true });
              if (opts.out !== undefined) {
                writeReport(opts.out, html);
                ctx.stderr.write(`orgsync: plan report written to ${opts.out}\n`);
              } else ctx.stdout.write(html);
            } else if (opts.out !== undefined && desired) {
              savePlan(opts.out, summary.plan, desired, { mirror: env.mirror, ownership: env.ownership, trust: new TrustStateStore(env.db, config.sync.id) });
              ctx.stderr.write(`orgsync: plan written to ${opts.out}\n`);
            }
            // Every source record, planned or left alone (issue 32); an `--only` plan is a part, so it has none.
            const records = desired && !summary.selection ? accountRecords(summary.plan, desired) : undefined;
            const extras = { quarantine: summary.quarantined, full: opts.full === true, ...(records ? { records } : {}) };
            // In chunks: the JSON of a million changes is longer than a string can be.
            const write = (chunk: string) => ctx.stdout.write(chunk);
            if (opts.output === 'json') for (const chunk of planJsonChunks(summary.plan, extras)) write(chunk);
            else if (opts.output === 'text') writeLines(planTextLines(summary.plan, extras), write);
            if (summary.exitCode !== EXIT.OK) {
              if (summary.error) ctx.stderr.write(`orgsync: ${summary.error}\n`);
              return summary.exitCode;
            }
            // Blocked source records are drift too: the platform is not what the sources say.
            if (opts.detailedExitcode && (summary.plan.changes.length > 0 || summary.blocked.length > 0)) return EXIT.DRIFT;
            return EXIT.OK;
          } finally {
            await env.close();
          }
        })(),
      );
    });
}
