import { existsSync } from 'node:fs';
import { privateMemberStage } from '../../mirror/member-stage.js';
import type { Command } from 'commander';
import { loadConfig, resolveConfigPath } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import type { DesiredState } from '../../domain/index.js';
import { openStateDb } from '../../mirror/db.js';
import { explainStateDbError } from '../../mirror/db-faults.js';
import type Database from 'better-sqlite3';
import { forgetPerson, forgottenMatching, hasMemberHistory, type ForgetReport, type ForgetTarget } from '../../mirror/forget.js';
import { Mirror, TOMBSTONE_STATUS } from '../../mirror/mirror.js';
import { OwnershipStore } from '../../mirror/ownership.js';
import { historyKeysFor } from '../../mirror/record-history.js';
import { createLogger } from '../../observability/logger.js';
import { readDesiredState } from '../../sources/index.js';
import { systemClock } from '../../shared/clock.js';
import { EXIT, OrgsyncError } from '../../shared/errors.js';
import type { CliContext, CommandResult } from '../context.js';

/** Whom `forget` erases, with what the checks need: their e-mails, live accounts, and when they were forgotten before. */
type ResolvedTarget = ForgetTarget & { emails: string[]; live: string[]; forgottenBefore: string[] };

/**
 * The person's source ids and platform ids: the selector as `orgsync history` reads it, completed both ways, and
 * through `forgotten_members` for a person forgotten before (their mirror record is blank, or gone). An e-mail
 * selector is itself a value to erase (issue 44), whether or not a record still carries it.
 */
function targetOf(selector: string, db: Database.Database, mirror: Mirror, owned: OwnershipStore): ResolvedTarget {
  const keys = historyKeysFor(selector, mirror, owned);
  const sourceIds = new Set(keys.sourceIds);
  const platformIds = new Set<string>();
  const email = selector.includes('@') ? selector.trim() : undefined;
  const emails = new Set<string>(email ? [email.toLowerCase()] : []);
  const live: string[] = [];
  const before = forgottenMatching(db, email ? [] : [selector.trim()]);
  for (const f of before) {
    platformIds.add(f.accountId);
    if (f.thirdUserId) sourceIds.add(f.thirdUserId);
  }
  for (const id of sourceIds) {
    const account = owned.accountOf(id);
    if (account !== undefined) platformIds.add(account);
  }
  // One pass over the mirror's members, a window at a time.
  for (const m of mirror.scanMembers()) {
    if (!(keys.platformIds.includes(m.account_id) || sourceIds.has(m.third_user_id) || platformIds.has(m.account_id))) continue;
    platformIds.add(m.account_id);
    if (m.third_user_id) sourceIds.add(m.third_user_id);
    if (m.email) emails.add(m.email.toLowerCase());
    if (m.status !== TOMBSTONE_STATUS.members && owned.sourceIdOfAccount(m.account_id) !== undefined) live.push(m.account_id);
  }
  const found = platformIds.size > 0 || hasMemberHistory(db, { sourceIds: [...sourceIds], platformIds: [...platformIds] });
  return {
    sourceIds: found ? [...sourceIds] : [],
    platformIds: [...platformIds],
    ...(email ? { values: [email, email.toLowerCase()] } : {}),
    emails: [...emails],
    live,
    forgottenBefore: before.map((f) => f.forgottenAt),
  };
}

/** The sources that still list the person (by source id or e-mail), by name. */
function sourcesListing(desired: DesiredState, target: { sourceIds: readonly string[]; emails: readonly string[] }): string[] {
  const names = new Set<string>();
  for (const m of desired.members) {
    if (!target.sourceIds.includes(m.source_id) && !(m.email !== undefined && target.emails.includes(m.email.toLowerCase()))) continue;
    if (m.origin) {
      names.add(m.origin.source);
      for (const s of Object.values(m.origin.fieldSources ?? {})) names.add(s);
    } else names.add('(unknown source)');
  }
  for (const q of desired.quarantine) if (q.entity === 'members' && q.source_id !== undefined && target.sourceIds.includes(q.source_id)) names.add(q.source);
  return [...names].sort();
}

/** What `forget` did and what it cannot reach, for the operator (ids only: the person's data is gone). */
function reportText(selector: string, dbPath: string, target: ResolvedTarget, r: ForgetReport): string {
  const known = target.sourceIds.length > 0 || target.platformIds.length > 0;
  const lines = [
    `Forgot "${selector}" (source id ${target.sourceIds.join(', ') || '-'}, platform id ${target.platformIds.join(', ') || '-'}) in ${dbPath}:`,
    ...(target.forgottenBefore.length > 0 ? [`  forgotten before (${target.forgottenBefore.join(', ')}); erased again wherever the state DB held them since`] : []),
    ...(known ? [] : ['  no record of the state DB carries this e-mail any more (forgotten before, or never synced); every copy of the e-mail itself was erased']),
    `  mirror: ${r.mirrorMembers} platform record(s) kept with blank name, e-mail and phone; later refreshes store them blank`,
    `  record history: ${r.historyEntries} entr${r.historyEntries === 1 ? 'y' : 'ies'} reduced to ids, operation and result; one "forget" entry added`,
    `  run summaries: ${r.runs}; pending approvals: ${r.approvals}${r.approvalsWithdrawn.length ? ` (withdrawn, their signed plan named the person: ${r.approvalsWithdrawn.join(', ')})` : ''}; phone cache: ${r.phoneCache} entr${r.phoneCache === 1 ? 'y' : 'ies'}`,
    `  freed bytes zeroed (secure_delete), file rewritten (VACUUM)${r.walTruncated ? ', WAL truncated' : '; the WAL could not be truncated while another process reads it: run forget again when it is idle'}`,
    'Not reached by orgsync (erase them yourself):',
    `  - backups taken earlier (orgsync state backup files, volume snapshots${existsSync(`${dbPath}.before-restore`) ? `, and ${dbPath}.before-restore` : ''})`,
    '  - plan files and HTML reports written with plan --out, and log lines shipped before (log pipelines keep their own retention)',
    "  - a running daemon's latest plan in memory (GET /plan): replaced by its next run",
    `  - the platform's own record of the account (its tombstone${target.platformIds.length ? ` ${target.platformIds.join(', ')}` : ''}): the platform's administrator deletes it`,
  ];
  return `${lines.join('\n')}\n`;
}

/** `orgsync forget`: checks, then erases, with the state DB held only for one write transaction. */
async function forget(selector: string, config: Config, ctx: CliContext): Promise<number> {
  const dbPath = resolveConfigPath(config, config.state.path);
  if (!existsSync(dbPath)) throw new OrgsyncError('STATE_ERROR', `no state DB at ${dbPath} (state.path): nothing to forget`);
  const busyTimeoutMs = config.state.busy_timeout;
  const db = openStateDb(dbPath, { busyTimeoutMs });
  try {
    const mirror = new Mirror(db);
    const target = targetOf(selector, db, mirror, new OwnershipStore(db, config.sync.id));
    if (target.platformIds.length === 0 && target.sourceIds.length === 0 && target.values === undefined) {
      throw new OrgsyncError('FORGET_REFUSED', `forget "${selector}": no member of the mirror matches (a source id, platform id or e-mail); check it with orgsync history`);
    }
    const logger = createLogger({ level: config.log.level === 'info' ? 'warn' : config.log.level, destination: ctx.stderr, pretty: false, secrets: config.meta.secrets, redactPaths: config.log.redact });
    const listing = sourcesListing(await readDesiredState(config, { env: ctx.env, logger, clock: systemClock, stage: privateMemberStage() }), target);
    if (listing.length > 0) {
      throw new OrgsyncError('FORGET_REFUSED', `forget "${selector}": source ${listing.map((s) => `"${s}"`).join(', ')} still lists this person, so the next run would bring them back; remove them from the source first`);
    }
    if (target.live.length > 0) {
      throw new OrgsyncError('FORGET_REFUSED', `forget "${selector}": platform account ${target.live.join(', ')} is still active and owned by this sync; the next run removes it (and records the removal): run forget after that run`);
    }
    let report: ForgetReport;
    try {
      report = forgetPerson(db, target, Date.now());
    } catch (err) {
      throw explainStateDbError(err, dbPath, { doing: 'forget: cannot write the state DB', busyTimeoutMs });
    }
    ctx.stdout.write(reportText(selector, dbPath, target, report));
    return EXIT.OK;
  } finally {
    db.close();
  }
}

/** `orgsync forget --config F SELECTOR` (issue 29): erase a person who left every source from orgsync's own state. */
export function registerForgetCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  program
    .command('forget')
    .description(
      "Erase a person's name, e-mail and phone from orgsync's state DB (mirror, record history, run summaries, approvals, phone cache), keeping only ids; for a person no longer in any source (a request under GDPR Article 17). Works beside a running daemon.",
    )
    .argument('<selector>', 'the person: a source id, a platform id or an e-mail (as for `orgsync history`)')
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .addHelpText(
      'after',
      `
Reads the sources first: a person a source still lists is refused (exit 2, naming the source), since the next run
would bring them back; so is an account that is still active on the platform and owned by this sync (run forget after
the run that removes it). Then, in one write transaction that waits state.busy_timeout for a daemon's write, it blanks
their data, zeroes the freed bytes (SQLite secure_delete), rewrites the file (VACUUM) and truncates the WAL. Later
refreshes keep their platform record blank. It prints what it cannot reach: earlier backups, plan files, shipped logs
and the platform's own tombstone of the account (its administrator deletes it).
Exit codes: 0 forgotten, 1 state DB error (locked longer than state.busy_timeout), 2 refused or config error.

Examples:
  $ orgsync forget --config my-sync.yaml E1042                      # a leaver no source lists any more (the demo's CSV still lists E1042: exit 2, refused)
  $ orgsync forget --config my-sync.yaml nadia.silva@demo-corp.test # by e-mail, as for orgsync history (still listed in the demo: exit 2, refused)`,
    )
    .action((selector: string, opts: { config: string }) => {
      setResult((async () => forget(selector, loadConfig(opts.config, ctx.env), ctx))());
    });
}
