import type { Command } from 'commander';
import { loadConfig } from '../../config/load.js';
import type { QuarantineEntry } from '../../domain/desired.js';
import { createLogger, wantsPretty } from '../../observability/logger.js';
import { EXIT } from '../../shared/errors.js';
import { readSourcesReport, type SourcesReport } from '../../sources/index.js';
import type { CliContext, CommandResult } from '../context.js';

/** `orgsync sources check`: reads every source and reports counts and quarantine, never touching the platform. */
export function registerSourcesCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  const sources = program.command('sources').description('HR sources (CSV, HRIS JSON, LDAP / Active Directory).');
  sources
    .command('check')
    .description('Read every source, merge and validate, and print the counts, the quarantine report and the values dropped from kept records (warnings such as invalid_phone_dropped). Does not contact the platform or open the state DB. Exit 0 when nothing was quarantined, 4 when something was, 1 when a source cannot be read, 2 on a config error.')
    .requiredOption('-c, --config <file>', 'config file (YAML); needs sources:')
    .option('--json', 'print one JSON document (per-source counts, desired counts, quarantine entries, warnings) instead of text')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync sources check --config my-sync.yaml
  $ orgsync sources check -c config/demo/orgsync.yaml --json | jq '.desired'`,
    )
    .action((opts: { config: string; json?: boolean }) => {
      setResult(
        (async () => {
          // Never calls the platform, so its key is neither needed nor read.
          const cfg = loadConfig(opts.config, ctx.env, { platformSecrets: false });
          const logger = createLogger({ level: cfg.log.level, destination: ctx.stderr, pretty: wantsPretty(cfg.log.format, ctx.isTTY), secrets: cfg.meta.secrets });
          const report = await readSourcesReport(cfg, { env: ctx.env, logger, signal: ctx.shutdownSignal });
          ctx.stdout.write(opts.json ? `${JSON.stringify(toJson(report), null, 2)}\n` : renderReport(cfg.meta.file, report));
          return report.state.quarantine.length > 0 ? EXIT.PARTIAL : EXIT.OK;
        })(),
      );
    });
}

function toJson(report: SourcesReport) {
  const { state } = report;
  return {
    sources: report.sources,
    desired: { departments: state.departments.length, positions: state.positions.length, members: state.members.length },
    provided: state.provided,
    quarantined: state.quarantine.length,
    quarantine: state.quarantine,
    warnings: state.warnings ?? [],
  };
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function renderEntry(q: QuarantineEntry): string {
  const id = q.source_id !== undefined ? ` "${q.source_id}"` : '';
  return `  ${q.entity}${id} (source ${q.source}, ${q.location}): ${q.reason}: ${q.message}\n`;
}

/** The text report: one line per source, the merged counts, then every quarantined record. */
export function renderReport(file: string, report: SourcesReport): string {
  const { state } = report;
  let out = `sources check: ${file}\n`;
  for (const s of report.sources) {
    const ex = (['departments', 'positions', 'members'] as const).filter((e) => (s.excluded?.[e] ?? 0) > 0);
    const scoped = ex.length > 0 ? `, out of scope: ${ex.map((e) => `${s.excluded[e]} ${e}`).join(', ')}` : '';
    out += `source ${s.name} (${s.type}): ${plural(s.departments, 'department')}, ${plural(s.positions, 'position')}, ${plural(s.members, 'member')}, ${s.quarantined} quarantined${scoped}\n`;
  }
  const provided = (['departments', 'positions', 'members'] as const).filter((e) => state.provided[e]);
  out += `desired: ${plural(state.departments.length, 'department')}, ${plural(state.positions.length, 'position')}, ${plural(state.members.length, 'member')} (provided: ${provided.length ? provided.join(', ') : 'none'})\n`;
  if (state.quarantine.length === 0) out += 'quarantine: none\n';
  else {
    const byReason = new Map<string, number>();
    for (const q of state.quarantine) byReason.set(q.reason, (byReason.get(q.reason) ?? 0) + 1);
    out += `quarantine: ${plural(state.quarantine.length, 'record')} (${[...byReason].map(([r, n]) => `${r} ${n}`).join(', ')})\n`;
    for (const q of state.quarantine) out += renderEntry(q);
  }
  // Values dropped from records that are synced (an invalid phone beside a valid e-mail): listed, never an exit code.
  const warnings = state.warnings ?? [];
  if (warnings.length > 0) {
    const byCode = new Map<string, number>();
    for (const w of warnings) byCode.set(w.code, (byCode.get(w.code) ?? 0) + 1);
    out += `warnings: ${warnings.length} (${[...byCode].map(([c, n]) => `${c} ${n}`).join(', ')})\n`;
    for (const w of warnings) out += `  ${w.entity} "${w.source_id}" (source ${w.source}, ${w.location}): ${w.code}: ${w.message}\n`;
  }
  return out;
}
