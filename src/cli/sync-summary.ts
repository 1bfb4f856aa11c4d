/**
 * The summary of a sync run as the operator reads it (text) and as tools read it (JSON): `sync` and `apply FILE`
 * print the same, so it lives beside the commands rather than in one of them.
 */
import type { RunSummary } from '../daemon/run-once.js';
import { CHANGE_OPS, ENTITY_KINDS } from '../domain/index.js';
import { blockedLines, blockedToJson } from '../planner/render.js';
import { writesOf } from '../daemon/daemon.js';
import { accountingLines, accountingToJson, type RecordAccounting } from '../planner/report/accounting.js';
import { NOT_OWNED_ABSENT } from '../planner/index.js';
import { jsonChunks } from '../shared/json-chunks.js';
import { lazyMap } from '../shared/lazy-array.js';

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
  for (const r of s.sourceReads ?? []) lines.push(`source ${r.source}: ${r.mode} read (${r.reason}), ${r.recordsRead} records read`);
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

/**
 * The JSON summary of `orgsync sync --output json`. Its lists are mapped when read (a stopped apply of a million
 * changes lists them all as not started): write it with syncSummaryJsonChunks.
 */
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
    failures: lazyMap(s.failures, (f) => ({ id: f.id, entity: f.entity, op: f.op, third_id: f.thirdId, platform_id: f.platformId ?? null, status: f.status, message: f.message })),
    not_started: s.notStarted.length,
    not_started_changes: lazyMap(s.notStarted, (f) => ({ id: f.id, entity: f.entity, op: f.op, third_id: f.thirdId, platform_id: f.platformId ?? null })),
    not_converged: lazyMap(s.notConverged, (f) => ({ id: f.id, entity: f.entity, op: f.op, third_id: f.thirdId, message: f.message })),
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
    ...(s.sourceReads ? { source_reads: s.sourceReads.map((r) => ({ source: r.source, mode: r.mode, reason: r.reason, records_read: r.recordsRead })) } : {}),
  };
}

/**
 * The text of `--output json`, JSON.stringify(syncSummaryJson(s, records), null, 2) and a newline, in chunks: the
 * summary of a stopped apply of a million changes is 158 MB of JSON, which as one string (and its list mapped whole
 * first) took that apply to 1,024 MB.
 */
export function* syncSummaryJsonChunks(s: RunSummary, records?: RecordAccounting): Generator<string> {
  yield* jsonChunks(syncSummaryJson(s, records), 'pretty');
  yield '\n';
}
