import { Option, type Command } from 'commander';
import { privateMemberStage } from '../../mirror/member-stage.js';
import { loadConfig } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import type { DesiredMember, QuarantineEntry } from '../../domain/desired.js';
import type { EntityKind } from '../../domain/entities.js';
import { createLogger, wantsPretty } from '../../observability/logger.js';
import { applyLifecycle, lifecycleOptionsFrom } from '../../planner/index.js';
import { parseHrDate } from '../../shared/dates.js';
import { EXIT, isOrgsyncError, OrgsyncError } from '../../shared/errors.js';
import { checkSources, readSourcesReport, type SourceCheckStep, type SourcesReport } from '../../sources/index.js';
import { gapText } from '../../desired/index.js';
import { previewSource, type SourcePreviewRead } from '../../sources/preview/read-preview.js';
import { previewDocument, renderPreview, type PreviewLifecycle } from '../../sources/preview/render.js';
import { renderSuggestion, suggestMapping } from '../../sources/suggest/suggest.js';
import type { CliContext, CommandResult } from '../context.js';

/** `orgsync sources check | preview | suggest`: reading sources and their mappings, never touching the platform. */
export function registerSourcesCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  const sources = program.command('sources').description('HR sources (CSV, HRIS JSON, LDAP / Active Directory).');
  registerCheck(sources, ctx, setResult);
  registerPreview(sources, ctx, setResult);
  registerSuggest(sources, ctx, setResult);
}

function registerSuggest(sources: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  sources
    .command('suggest')
    .description(
      'Propose a fields: mapping from a saved API response (JSON: an array of records, or an object with the list under a key such as value, Resources, employees, data, users, workers, Report_Entry or d.results) or a CSV export (its header), as a YAML fragment to paste; each line ends with how sure it is (sure, likely, guess) and the key or column it matched, and the fragment ends with the fields it found nothing for, each with why. JSON values are checked: an e-mail key must hold addresses, a date key dates (never true/false), a status key status values or booleans (a status_map is proposed from them). With --preset, the preset\'s own fields are tried on the sample first and only those that find nothing are proposed. Reads nothing but the file. Exit 0, 2 when the sample cannot be used.',
    )
    .requiredOption('--sample <file>', 'a saved response (.json) or a CSV export')
    .option('--preset <name>', 'a preset whose own fields are tried first (docs/sources/)')
    .addOption(new Option('--entity <entity>', 'what the sample holds: members, or departments (id, name, parent, sort_order)').choices(['members', 'departments']).default('members'))
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync sources suggest --sample config/demo/members.csv
  $ orgsync sources suggest --sample config/demo/employees.json
  $ orgsync sources suggest --sample config/demo/employees.json --preset bamboohr
  $ orgsync sources suggest --sample config/demo/departments.csv --entity departments`,
    )
    .action((opts: { sample: string; preset?: string; entity: 'members' | 'departments' }) =>
      setResult(
        (async () => {
          ctx.stdout.write(renderSuggestion(suggestMapping(opts.sample, opts.preset, opts.entity)));
          return EXIT.OK;
        })(),
      ),
    );
}

function registerCheck(sources: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  sources
    .command('check')
    .description(
      'Check each LDAP source step by step (connect, TLS, bind, search of the members filter, read of the watermark attribute), then read every source, merge and validate, and print the counts, the quarantine report, the values dropped from kept records (warnings such as invalid_phone_dropped) and the mapped fields that matched nothing in any record, with how far each path got. A failed step stops the check: it is named, with the setting to change. Does not contact the platform or open the state DB. Exit 0 when nothing was quarantined, 4 when something was, 1 when a step fails or a source cannot be read, 2 on a config error.',
    )
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
          const logger = createLogger({ level: cfg.log.level, destination: ctx.stderr, pretty: wantsPretty(cfg.log.format, ctx.isTTY), secrets: cfg.meta.secrets, redactPaths: cfg.log.redact });
          const readOpts = { env: ctx.env, logger, signal: ctx.shutdownSignal };
          const checks: SourceCheckStep[] = [];
          try {
            await checkSources(cfg, readOpts, (s) => checks.push(s));
          } catch (err) {
            if (!opts.json) ctx.stdout.write(renderChecks(cfg.meta.file, checks));
            throw atStep(err, checks.at(-1));
          }
          // The members are staged in a private temporary database (issue 42): a million are checked in bounded memory.
          const report = await readSourcesReport(cfg, { ...readOpts, stage: privateMemberStage(), fieldCoverage: true });
          ctx.stdout.write(opts.json ? `${JSON.stringify(toJson(report, checks), null, 2)}\n` : renderReport(cfg.meta.file, report, checks));
          return report.state.quarantine.length > 0 ? EXIT.PARTIAL : EXIT.OK;
        })(),
      );
    });
}

interface PreviewOpts {
  config: string;
  source?: string;
  entity: EntityKind;
  limit: string;
  output: 'text' | 'json';
  today?: string;
}

function registerPreview(sources: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  sources
    .command('preview')
    .description(
      'Read the first records of a source (through its real pagination, auth and paging; the read stops once it has them) and show each raw record beside what the mapping made of it: every field with the path, column or candidate it came from, the start and end dates with the lifecycle rule they lead to on the day (a leaver: not synced), and the quarantine reason, if any; then a warning for each mapped field that matched nothing in the records read. Writes nothing: no state DB, no platform call. Prints personal data to this terminal. Exit 0, 1 when a source cannot be read, 2 on a config or usage error.',
    )
    .requiredOption('-c, --config <file>', 'config file (YAML); needs sources:')
    .option('--source <name>', 'the source to read (default: every source in turn)')
    .addOption(new Option('--entity <entity>', 'which records to read').choices(['members', 'departments', 'positions']).default('members'))
    .option('--limit <n>', 'how many records to read from each source (1-1000)', '10')
    .addOption(new Option('--output <format>', 'text for a terminal, or json (its shape is in docs/commands.md)').choices(['text', 'json']).default('text'))
    .option('--today <date>', 'judge start and end dates as on this day or instant (ISO date or date-time; default: now)')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync sources preview --config config/demo/orgsync.yaml --source hr --limit 3
  $ orgsync sources preview --config config/demo/orgsync.yaml --source hris --limit 2 --output json
  $ orgsync sources preview --config config/demo/orgsync.yaml --entity departments --limit 5 --today 2027-01-01`,
    )
    .action((opts: PreviewOpts) => setResult(runPreview(opts, ctx)));
}

async function runPreview(opts: PreviewOpts, ctx: CliContext): Promise<number> {
  const limit = Number(opts.limit);
  if (!/^\d+$/.test(opts.limit) || limit < 1 || limit > 1000) throw new OrgsyncError('USAGE', `sources preview: --limit ${opts.limit}: give a number of records from 1 to 1000`);
  const cfg = loadConfig(opts.config, ctx.env, { platformSecrets: false });
  const now = opts.today === undefined ? Date.now() : dayToJudge(opts.today, cfg);
  const chosen = opts.source === undefined ? cfg.sources : cfg.sources.filter((s) => s.name === opts.source);
  if (chosen.length === 0) throw new OrgsyncError('USAGE', `sources preview: ${cfg.meta.file} has no source named "${opts.source}" (its sources: ${cfg.sources.map((s) => s.name).join(', ') || 'none'}); set --source to one of them`);
  const logger = createLogger({ level: cfg.log.level, destination: ctx.stderr, pretty: wantsPretty(cfg.log.format, ctx.isTTY), secrets: cfg.meta.secrets, redactPaths: cfg.log.redact });
  const reads: SourcePreviewRead[] = [];
  for (const source of chosen) {
    reads.push(await previewSource(source, { config: cfg, entity: opts.entity, limit, env: ctx.env, logger: logger.child({ source: source.name }), signal: ctx.shutdownSignal }));
  }
  const today = opts.today ?? new Date(now).toISOString().slice(0, 10);
  const doc = previewDocument(reads, { today, limit, entity: opts.entity, lifecycle: lifecycleJudge(cfg, now) });
  ctx.stdout.write(opts.output === 'json' ? `${JSON.stringify(doc, null, 2)}\n` : renderPreview(doc));
  return EXIT.OK;
}

/** `--today`: the instant dates are judged at (a date is its midnight in the config's timezone). */
function dayToJudge(text: string, cfg: Config): number {
  const r = parseHrDate(text, cfg.timezone ?? 'UTC');
  // The operator's own input: named as given (the date reader's message shows only a value's shape, for HR data).
  if ('problem' in r) throw new OrgsyncError('USAGE', `sources preview: --today: ${JSON.stringify(text)} is not a date: give an ISO date or date-time (e.g. --today 2026-11-27 or --today 2026-11-27T09:00:00Z)`);
  if ('none' in r) throw new OrgsyncError('USAGE', 'sources preview: --today: a date is required (e.g. --today 2026-11-27)');
  return r.ms;
}

/** The planner's lifecycle rules (sync.lifecycle) on one member not yet on the platform, at `now`. */
function lifecycleJudge(cfg: Config, now: number): (m: DesiredMember) => PreviewLifecycle {
  const opts = lifecycleOptionsFrom(cfg.sync);
  const onPlatform = opts.endAction === 'suspend' ? 'suspended' : 'removed';
  return (m) => {
    const event = applyLifecycle([m], [], opts, now).events[0];
    if (event?.rule === 'scheduled') {
      const createOn = event.createOn!.slice(0, 10);
      return { rule: 'scheduled', create_on: createOn, message: `start_date ${event.date} is ahead: not created before ${createOn} (sync.lifecycle.create_days_before_start: ${opts.createDaysBeforeStart})` };
    }
    if (event?.rule === 'ended') return { rule: 'ended', message: `end_date ${event.date} has passed: not created (a member already on the platform is ${onPlatform})` };
    // Issue 45: a leaver is said to be one, not "synced with status left".
    if (m.status === 'left') return { rule: 'left', message: `not synced (status left): not created (a member of this sync already on the platform is ${leaverOnPlatform(cfg)})` };
    const ending = event?.rule === 'ending' ? `; end_date ${event.date} is ahead: ${onPlatform} from ${event.at} (sync.lifecycle.end_action: ${opts.endAction})` : '';
    return { rule: 'active', message: `no dated rule holds it back: synced with status ${m.status}${ending}` };
  };
}

/** What becomes of a leaver of this sync on the platform (sync.member_removal). */
function leaverOnPlatform(cfg: Config): string {
  return cfg.sync.member_removal === 'suspended' ? 'suspended (sync.member_removal: suspended)' : 'removed (sync.member_removal: left)';
}

function toJson(report: SourcesReport, checks: SourceCheckStep[]) {
  const { state } = report;
  return {
    checks,
    sources: report.sources,
    desired: { departments: state.departments.length, positions: state.positions.length, members: state.members.length },
    provided: state.provided,
    quarantined: state.quarantine.length,
    quarantine: state.quarantine,
    warnings: state.warnings ?? [],
    fields_matched_nothing: report.sources.flatMap((s) => (s.field_gaps ?? []).map((g) => ({ source: s.name, ...g }))),
  };
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function renderEntry(q: QuarantineEntry): string {
  const id = q.source_id !== undefined ? ` "${q.source_id}"` : '';
  return `  ${q.entity}${id} (source ${q.source}, ${q.location}): ${q.reason}: ${q.message}\n`;
}

/** The header and one line per check step (`check ad: bind ok (as ...)`); a failed step's message is the error's. */
function renderChecks(file: string, checks: SourceCheckStep[]): string {
  let out = `sources check: ${file}\n`;
  for (const c of checks) out += `check ${c.source}: ${c.step} ${c.result}${c.result === 'failed' ? '' : ` (${c.detail})`}\n`;
  return out;
}

/** The error of a failed step, its message saying which step it was (`source "ad": sources check failed at "bind": ...`). */
function atStep(err: unknown, last: SourceCheckStep | undefined): unknown {
  if (!isOrgsyncError(err) || last?.result !== 'failed') return err;
  const prefix = `source "${last.source}": `;
  const rest = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
  return new OrgsyncError(err.code, `${prefix}sources check failed at "${last.step}": ${rest}`, { cause: err, details: err.details });
}

/** The text report: the check steps, one line per source, the merged counts, then every quarantined record. */
export function renderReport(file: string, report: SourcesReport, checks: SourceCheckStep[] = []): string {
  const { state } = report;
  let out = renderChecks(file, checks);
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
  return out + gapLines(report);
}

/** Mapped fields that found nothing in any record read (issue 45): named per source, never an exit code. */
function gapLines(report: SourcesReport): string {
  const gaps = report.sources.flatMap((s) => (s.field_gaps ?? []).map((g) => ({ source: s.name, g })));
  if (gaps.length === 0) return '';
  let out = `fields that matched nothing: ${gaps.length} (${gaps.map(({ g }) => `${g.entity}.${g.field}`).join(', ')})\n`;
  for (const { source, g } of gaps) out += `  ${g.entity}.${g.field} (source ${source}): ${gapText(g)}\n`;
  return out;
}
