import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { Option } from 'commander';
import { loadConfig } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { approvalJson } from '../../daemon/approvals.js';
import { stateDbOptionsFrom, type StateDbSettings } from '../../daemon/pipeline/options.js';
import { streamSavedPlan } from '../../daemon/saved-plan-stream.js';
import type { Change, Plan } from '../../domain/index.js';
import { ApprovalStore, type ApprovalRecord } from '../../mirror/approvals.js';
import { openStateDb } from '../../mirror/db.js';
import { explainStateDbError } from '../../mirror/db-faults.js';
import { MirrorLease } from '../../mirror/lease.js';
import { TrustStateStore } from '../../mirror/trust-state.js';
import { planJsonChunks, planTextLines, writeLines } from '../../planner/render.js';
import { GatheredChanges } from '../../planner/report/gathered.js';
import { reportHtmlChunks, type PlanReportContext, type PlanReportRows } from '../../planner/report/index.js';
import { jsonArrayElements } from '../../shared/json-stream-reader.js';
import { steadyWallClock, systemClock } from '../../shared/clock.js';
import { EXIT, OrgsyncError } from '../../shared/errors.js';
import type { CliContext, CommandResult } from '../context.js';

/** Opens the state DB of `config`, hands `fn` its approvals, closes it. */
function withStore<T>(config: Config, fn: (store: ApprovalStore, db: ReturnType<typeof openStateDb>, state: StateDbSettings) => T): T {
  const state = stateDbOptionsFrom(config);
  const db = openStateDb(state.path, { busyTimeoutMs: state.busyTimeoutMs });
  try {
    return fn(new ApprovalStore(db, config.sync.id), db, state);
  } finally {
    db.close();
  }
}

function find(store: ApprovalStore, digest: string): ApprovalRecord {
  const a = store.get(digest);
  if (!a) throw new OrgsyncError('NOT_FOUND', `no approval ${digest} for sync ${store.syncId} in this state DB; see \`orgsync approvals list\``);
  return a;
}

/** `approvals list`'s text: one line per approval. */
function listText(config: Config, list: readonly ApprovalRecord[]): string {
  if (list.length === 0) return `No approvals for sync ${config.sync.id}.\n`;
  return list.map((a) => `${a.digest}  ${a.status.padEnd(10)}  ${a.guard.padEnd(16)}  ${a.createdAt}  ${a.status === 'used' ? `used by run ${a.usedByRun ?? '?'} at ${a.usedAt ?? '?'}` : a.message}\n`).join('');
}

/**
 * `approvals show`'s document: the saved plan as text, JSON or the HTML report, handed to `write` in chunks (the JSON
 * of a million changes is longer than a string can be). The stored plan is read as it streams (issue 31 point 2):
 * checked whole first (signature, sync id) keeping only the rows the reports list, then, for JSON, read again change
 * by change into the output, all in one read transaction so both passes read the same plan.
 */
function showApproval(config: Config, digest: string, output: 'text' | 'json' | 'html', write: (chunk: string) => void): void {
  withStore(config, (store, db) =>
    db.transaction(() => {
      const a = find(store, digest);
      const context = JSON.parse(a.context()) as PlanReportContext;
      const extras = { quarantine: context.quarantine ?? [] };
      const gathered = new GatheredChanges({ html: output === 'html', ...(context.memberDepartments ? { memberDepartments: context.memberDepartments } : {}) });
      const sink = { each: (c: Change) => gathered.add(c), restart: () => gathered.restart() };
      const { saved } = streamSavedPlan(() => a.savedPlan(), `approval ${a.digest}`, config.sync.id, new TrustStateStore(db, config.sync.id).planSigningKey(), sink);
      const plan = gathered.reportPlan(saved.plan);
      if (output === 'html') return write(renderReport(plan, gathered.html!, { ...context, approval: { digest: a.digest, status: a.status } }));
      if (output === 'json') return writeApprovalJson({ ...approvalJson(a), inputs: saved.inputs }, planJsonChunks(plan, extras, undefined, storedChanges(a)), write);
      write(`Approval ${a.digest} (${a.status}), refused by ${a.guard} at ${a.createdAt}${a.usedByRun ? `, used by run ${a.usedByRun}` : ''}\n\n`);
      writeLines(planTextLines(plan, extras), write);
    })(),
  );
}

/** The HTML report as one string (bounded: at most HTML_ROWS_PER_TABLE rows per table). */
function renderReport(plan: Plan, rows: PlanReportRows, ctx: PlanReportContext): string {
  let html = '';
  for (const chunk of reportHtmlChunks(plan, rows, ctx)) html += chunk;
  return html;
}

/** The changes of an approval's stored plan, read again one by one (after streamSavedPlan checked it). */
function* storedChanges(a: ApprovalRecord): Generator<Change> {
  for (const c of jsonArrayElements(a.savedPlan(), ['plan', 'changes'])) yield c as Change;
}

/**
 * `JSON.stringify({...head, plan}, null, 2)` and a newline, with the plan's document given as its own chunks (each
 * ending in whole lines): the plan is nested one level deeper, so every line of it is indented by two more spaces.
 */
function writeApprovalJson(head: Record<string, unknown>, plan: Iterable<string>, write: (chunk: string) => void): void {
  const frame = JSON.stringify({ ...head, plan: null }, null, 2);
  const marker = '\n  "plan": null\n}';
  write(`${frame.slice(0, frame.length - marker.length)}\n  "plan": `);
  let pending = '';
  for (const chunk of plan) {
    if (pending !== '') write(pending.replace(/\n/g, '\n  '));
    pending = chunk;
  }
  // The plan document ends in a newline of its own: that one closes the outer object instead.
  write(`${pending.slice(0, -1).replace(/\n/g, '\n  ')}\n}\n`);
}

/** Who approves: the user's name, or the command alone (a container without a passwd entry has no user name). */
function approver(): string {
  try {
    return `${userInfo().username} (approvals approve)`;
  } catch {
    return 'approvals approve';
  }
}

/** `approvals approve`: marks the approval approved, under the state DB's lease; returns the line to print. */
function approveStored(config: Config, digest: string): string {
  return withStore(config, (store, db, state) => {
    const lease = new MirrorLease(db, { dbPath: state.path, now: steadyWallClock(systemClock), ttlMs: state.leaseTtlMs });
    try {
      lease.acquire();
    } catch (err) {
      throw explainStateDbError(err, state.path, { doing: 'cannot take the state DB lease to approve', busyTimeoutMs: state.busyTimeoutMs });
    }
    try {
      const a = find(store, digest);
      if (a.status === 'used') throw new OrgsyncError('NOT_FOUND', `approval ${a.digest} was already used by run ${a.usedByRun ?? '?'} at ${a.usedAt ?? '?'}; an approval is used once`);
      if (a.status === 'superseded') throw new OrgsyncError('NOT_FOUND', `approval ${a.digest} was superseded by a later refused plan; see \`orgsync approvals list\``);
      store.approve(a.digest, new Date(systemClock.now()).toISOString(), approver());
      return `Approved ${a.digest} (${a.guard}): the next run applies exactly this plan if the platform and the sources still match what it was made from.\n`;
    } finally {
      lease.release();
    }
  });
}

/**
 * `orgsync approvals list|show|approve` (issue 20): the plans guards refused, saved signed in the state DB under a
 * digest; show one as text, JSON or the HTML report; approve one for the next run (needs the state DB's lease).
 */
export function registerApprovalsCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  const approvals = program
    .command('approvals')
    .description('Plans a guard refused (delete threshold, source shrink, scope change), saved in the state DB as pending approvals under a digest (sha256: + 12 hex). Approve one with sync.approve in the config (GitOps) or with `orgsync approvals approve DIGEST`; the next run applies exactly that plan if the platform and the sources still match.')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync approvals list --config my-sync.yaml
  $ orgsync approvals show sha256:4f1c2a9b7e0d --config my-sync.yaml --output html > review.html   # a digest the list printed (exit 1: none such)
  $ orgsync approvals approve sha256:4f1c2a9b7e0d --config my-sync.yaml                          # a digest the list printed (exit 1: none such)`,
    );
  registerList(approvals, ctx, setResult);
  registerShow(approvals, ctx, setResult);
  registerApprove(approvals, ctx, setResult);
}

/** `orgsync approvals list`. */
function registerList(approvals: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  approvals
    .command('list')
    .description('List the approvals of this sync, newest first: digest, guard, status (pending, approved, used, superseded), when, and the refusal.')
    .requiredOption('-c, --config <file>', 'config file (YAML); its state.path names the state DB')
    .addOption(new Option('-o, --output <format>', 'text or json').choices(['text', 'json']).default('text'))
    .addHelpText('after', '\nExamples:\n  $ orgsync approvals list --config my-sync.yaml')
    .action((opts: { config: string; output: 'text' | 'json' }) => {
      setResult(
        (async () => {
          const config = loadConfig(opts.config, ctx.env);
          // Inside withStore: each approval's counts are read from its stored plan.
          const out = withStore(config, (store) => {
            const list = store.list();
            return opts.output === 'json' ? `${JSON.stringify({ sync_id: config.sync.id, approvals: list.map(approvalJson) }, null, 2)}\n` : listText(config, list);
          });
          ctx.stdout.write(out);
          return EXIT.OK;
        })(),
      );
    });
}

/** `orgsync approvals show`. */
function registerShow(approvals: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  approvals
    .command('show')
    .description('Show the plan saved under DIGEST: as text (the plan table), JSON (the approval and `plan --output json`\'s document) or the HTML report.')
    .argument('<digest>', 'the digest the refusal printed (sha256: + 12 hex)')
    .requiredOption('-c, --config <file>', 'config file (YAML); its state.path names the state DB')
    .addOption(new Option('-o, --output <format>', 'text, json or html').choices(['text', 'json', 'html']).default('text'))
    .addHelpText('after', '\nExamples:\n  $ orgsync approvals show sha256:4f1c2a9b7e0d --config my-sync.yaml --output html > review.html   # a digest approvals list printed (exit 1: none such)')
    .action((digest: string, opts: { config: string; output: 'text' | 'json' | 'html' }) => {
      setResult(
        (async () => {
          showApproval(loadConfig(opts.config, ctx.env), digest, opts.output, (chunk) => ctx.stdout.write(chunk));
          return EXIT.OK;
        })(),
      );
    });
}

/** `orgsync approvals approve`. */
function registerApprove(approvals: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  approvals
    .command('approve')
    .description('Approve the plan saved under DIGEST (for operators without GitOps): the next run applies exactly it if the platform and the sources still match what it was made from, else it refuses, says what changed and saves the new plan. Writes to the state DB: needs the lease (stop a one-off sync first; a running daemon must be stopped or use sync.approve).')
    .argument('<digest>', 'the digest the refusal printed (sha256: + 12 hex)')
    .requiredOption('-c, --config <file>', 'config file (YAML); its state.path names the state DB')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync approvals approve sha256:4f1c2a9b7e0d --config my-sync.yaml   # a digest approvals list printed (exit 1: none such)

Exit codes: 0 approved, 1 no such approval, it was used or superseded already, or another process holds the lease,
2 config or usage error.`,
    )
    .action((digest: string, opts: { config: string }) => {
      setResult(
        (async () => {
          ctx.stdout.write(approveStored(loadConfig(opts.config, ctx.env), digest));
          return EXIT.OK;
        })(),
      );
    });
}
