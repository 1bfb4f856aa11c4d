/** The two renderings of a Plan: a text table per entity and operation, and one stable JSON document. */
import type { BlockedRecord, Change, EntityKind, Plan, PlanValue, QuarantineEntry } from '../domain/index.js';
import { blockedRecords, CHANGE_OPS, ENTITY_KINDS } from '../domain/index.js';
import { accountingLines, accountingToJson, formatCount, type RecordAccounting } from './report/accounting.js';
import { joinedChunks } from '../shared/json-chunks.js';

const SIGN: Record<string, string> = { create: '+', adopt: '@', update: '~', move: '>', remove: '-' };

/** Extra facts the renderings show beside the plan. */
export interface RenderExtras {
  quarantine?: readonly QuarantineEntry[];
  /** Print every row (`plan --full`); by default at most ROWS_PER_GROUP rows per entity and operation. */
  full?: boolean;
  /** Where every source record went (issue 32): printed after the summary, and `records` in JSON. */
  records?: RecordAccounting;
}

/** Rows of one entity and operation (or one list: warnings, withheld, ...) the text plan prints unless `--full`; the rest are counted. */
export const ROWS_PER_GROUP = 50;

/** The one-line summary: `Plan: 3 to create, 0 to adopt, 1 to update, 0 to move, 2 to remove.` */
export function summaryLine(plan: Plan): string {
  if (plan.changes.length === 0 && !plan.refusal) {
    const blocked = blockedRecords(plan).length;
    // Never "in sync" while a source record could not be created or updated.
    if (blocked > 0) return `No changes to apply, but ${blocked} source record(s) are blocked (not created or updated).`;
    return 'No changes: the platform is in sync with the sources.';
  }
  const parts = CHANGE_OPS.map((op) => `${ENTITY_KINDS.reduce((n, e) => n + plan.counts[e][op], 0)} to ${op}`);
  return `Plan: ${parts.join(', ')}.`;
}

function json(v: PlanValue | undefined): string {
  return JSON.stringify(v);
}

function changeDetail(c: Change): string {
  const keys = Object.keys(c.fields).filter((k) => k !== 'metadata' || c.op === 'adopt');
  if (c.op === 'create' || c.op === 'remove' || keys.length === 0) return '';
  // A field with no earlier value (the follow-up PATCH of a record created in the same run) shows only its new value.
  // Department ids read as paths (`parent_id: "/Acme" -> "/Acme/Sales"`), never a source id or a UUID.
  const value = (k: string, side: 'before' | 'after', v: PlanValue | undefined) => {
    const path = c.paths?.[k]?.[side];
    return path !== undefined ? json(path) : json(v);
  };
  return keys.map((k) => (c.before?.[k] === undefined ? `${k}: ${value(k, 'after', c.fields[k])}` : `${k}: ${value(k, 'before', c.before[k])} -> ${value(k, 'after', c.fields[k])}`)).join('; ');
}

/**
 * One list of the text plan: its heading, at most ROWS_PER_GROUP rows (every row with `full`), `  ... and N more
 * <what> (--full prints all)`, and an empty line. `total`: the list's length when `list` holds only its first rows.
 * Returns how many rows it left out.
 */
function* listLines<T>(heading: string, list: readonly T[], full: boolean | undefined, row: (t: T) => string, what: string, total = list.length): Generator<string, number> {
  if (total === 0) return 0;
  yield heading;
  const shown = full ? list.length : Math.min(list.length, ROWS_PER_GROUP);
  for (let i = 0; i < shown; i++) yield row(list[i]!);
  if (shown < total) yield `  ... and ${formatCount(total - shown)} more ${what} (--full prints all)`;
  yield '';
  return total - shown;
}

/** The changes of one entity and operation: how many, and the first `keep` of them in plan order. */
interface ChangeGroup {
  count: number;
  rows: Change[];
}

/**
 * The changes of a plan per entity and operation (ENTITY_KINDS x CHANGE_OPS, in that order), in plan order, each
 * holding at most `keep` rows: a page of a million changes copies no list of them.
 */
function groupChanges(changes: readonly Change[], keep: number): ChangeGroup[] {
  const groups: ChangeGroup[] = [];
  for (let i = 0; i < ENTITY_KINDS.length * CHANGE_OPS.length; i++) groups.push({ count: 0, rows: [] });
  const entityAt = new Map(ENTITY_KINDS.map((e, i) => [e as string, i * CHANGE_OPS.length]));
  const opAt = new Map(CHANGE_OPS.map((op, i) => [op as string, i]));
  for (const c of changes) {
    const g = groups[entityAt.get(c.entity)! + opAt.get(c.op)!]!;
    if (g.count++ < keep) g.rows.push(c);
  }
  return groups;
}

/** The tables of changes, one per entity and operation; returns how many changes they left out. */
function* changeTableLines(plan: Plan, full: boolean | undefined): Generator<string, number> {
  const groups = groupChanges(plan.changes, full ? Number.POSITIVE_INFINITY : ROWS_PER_GROUP);
  let omitted = 0;
  for (const [e, entity] of ENTITY_KINDS.entries()) {
    for (const [o, op] of CHANGE_OPS.entries()) {
      const { count, rows: list } = groups[e * CHANGE_OPS.length + o]!;
      if (count === 0) continue;
      // The key column is as wide as the longest key shown (a loop: a million changes do not fit in an argument list).
      const shownCount = full ? list.length : Math.min(list.length, ROWS_PER_GROUP);
      let keyWidth = 3;
      for (let i = 0; i < shownCount; i++) keyWidth = Math.max(keyWidth, (list[i]!.thirdId || list[i]!.platformId || '').length);
      keyWidth = Math.min(40, keyWidth);
      const row = (c: Change) => {
        const detail = changeDetail(c);
        return `  ${SIGN[op]} ${(c.thirdId || c.platformId || '').padEnd(keyWidth)}  ${c.description}${detail ? `  [${detail}]` : ''}  (${c.reason})`;
      };
      omitted += yield* listLines(`${entity} ${op} (${count})`, list, full, row, `${entity} to ${op}`, count);
    }
  }
  return omitted;
}

const endedAction = (a: string | undefined) => (a === 'not_created' ? 'not created' : a === 'suspend' ? 'suspended' : 'removed');

/**
 * The lines of the text plan: one table per entity and operation, then warnings, withheld changes, quarantine, a
 * summary line and where the source records went. Each list prints at most ROWS_PER_GROUP rows unless `full`, so a
 * plan of a million changes prints a page; a generator, so `--full` streams instead of building one string.
 */
export function* planTextLines(plan: Plan, extras: RenderExtras = {}): Generator<string> {
  const full = extras.full;
  // The summary first (a 20,000-row plan is read from the top), and again at the end.
  const total = summaryText(plan);
  if (plan.changes.length > 0) yield* [total, ''];
  let omitted = yield* changeTableLines(plan, full);
  omitted += yield* listLines(`warnings (${plan.warnings.length})`, plan.warnings, full, (w) => `  ! ${w.code} ${w.entity} ${w.thirdId || w.platformId || ''}: ${w.message}`, 'warnings');
  omitted += yield* listLines(`withheld (${plan.withheld.length})`, plan.withheld, full, (w) => `  . ${w.change.entity} ${w.change.op} ${w.change.thirdId || w.change.platformId || ''}: ${w.change.description} (${w.why}${w.dueAt ? `, due ${w.dueAt}` : ''})`, 'withheld changes');
  const scheduled = plan.lifecycle?.scheduled ?? [];
  omitted += yield* listLines(`scheduled (${scheduled.length})`, scheduled, full, (e) => `  > members ${e.thirdId}: "${e.displayName}" starts ${e.date}; created from ${e.createOn}`, 'scheduled members');
  const ending = plan.lifecycle?.ending ?? [];
  omitted += yield* listLines(`scheduled ends (${ending.length})`, ending, full, (e) => `  < members ${e.thirdId}: "${e.displayName}" ends ${e.date}; ${endedAction(e.action)} from ${e.at}`, 'scheduled ends');
  const ended = plan.lifecycle?.ended ?? [];
  omitted += yield* listLines(`ended (${ended.length})`, ended, full, (e) => `  < members ${e.thirdId}: "${e.displayName}" end_date ${e.date} has passed: ${endedAction(e.action)}`, 'ended members');
  const quarantine = extras.quarantine ?? [];
  omitted += yield* listLines(`quarantined (${quarantine.length})`, quarantine, full, (q) => `  ? ${q.entity} ${q.source_id ?? ''} ${q.source} ${q.location}: ${q.reason}: ${q.message}`, 'quarantined records');
  if (omitted > 0) yield* [`Not listed above: ${formatCount(omitted)} rows (--full prints every row; the JSON output lists every change: --output json).`, ''];
  yield* blockedLines(blockedRecords(plan));
  if (plan.refusal) yield `REFUSED by ${plan.refusal.guard}: ${plan.refusal.message}`;
  yield total;
  if (extras.records) yield* accountingLines(extras.records);
}

/** Text: the lines of planTextLines, as one string (for plans whose text is a page; `writeLines` streams). */
export function renderPlanText(plan: Plan, extras: RenderExtras = {}): string {
  let out = '';
  for (const line of planTextLines(plan, extras)) out += `${line}\n`;
  return out;
}

/** Writes lines (each followed by a newline) in chunks of about 64 KB: a million rows never become one string. */
export function writeLines(lines: Iterable<string>, write: (chunk: string) => void, chunkSize = 65_536): void {
  let parts: string[] = [];
  let size = 0;
  for (const line of lines) {
    parts.push(line, '\n');
    size += line.length + 1;
    if (size >= chunkSize) {
      write(parts.join(''));
      parts = [];
      size = 0;
    }
  }
  if (parts.length > 0) write(parts.join(''));
}

/** `Plan: ... (changes: positions 1, departments 2, members 3) 1 warning(s), 1 unpatchable drift.` */
function summaryText(plan: Plan): string {
  const perEntity = ENTITY_KINDS.map((e) => `${e} ${CHANGE_OPS.reduce((n, op) => n + plan.counts[e][op], 0)}`).join(', ');
  const drift = plan.warnings.filter((w) => w.code === 'unpatchable_drift').length;
  return `${summaryLine(plan)}${plan.changes.length > 0 ? ` (changes: ${perEntity})` : ''}${plan.warnings.length ? ` ${plan.warnings.length} warning(s)${drift ? `, ${drift} unpatchable drift` : ''}.` : ''}`;
}

/**
 * `blocked: N` and one line per blocked source record (entity, source id, reason, why), for the plan and sync
 * summaries; nothing when none is blocked.
 */
export function blockedLines(blocked: readonly BlockedRecord[], limit = 50): string[] {
  if (blocked.length === 0) return [];
  const lines = [`blocked: ${blocked.length}`];
  for (const b of blocked.slice(0, limit)) lines.push(`  x ${b.entity} ${b.sourceId}: ${b.reason}: ${b.message}`);
  if (blocked.length > limit) lines.push(`  ... and ${blocked.length - limit} more`);
  lines.push('');
  return lines;
}

/** A blocked record in the JSON documents of `plan` and `sync`. */
export interface BlockedJson {
  entity: EntityKind;
  source_id: string;
  platform_id: string | null;
  reason: string;
  message: string;
}

/** The JSON form of blocked records. */
export function blockedToJson(blocked: readonly BlockedRecord[]): BlockedJson[] {
  return blocked.map((b) => ({ entity: b.entity, source_id: b.sourceId, platform_id: b.platformId ?? null, reason: b.reason, message: b.message }));
}

/** The JSON shape of `orgsync plan --output json` (README "orgsync plan"). Stable: fields are only ever added. */
export interface PlanJson {
  format_version: number;
  sync_id: string;
  policy: string;
  created_at: string;
  in_sync: boolean;
  summary: Record<EntityKind, Record<string, number>> & { total: number; warnings: number; unpatchable_drift: number; withheld: number; quarantined: number; blocked: number; scheduled: number; ended: number; ending: number };
  refusal: { guard: string; message: string; entities?: unknown } | null;
  changes: {
    id: string;
    entity: EntityKind;
    op: string;
    third_id: string;
    platform_id: string | null;
    description: string;
    reason: string;
    fields: Record<string, PlanValue>;
    before: Record<string, PlanValue> | null;
    request: { method: string; path: string; body: Record<string, PlanValue> | null } | null;
    depends_on: string[];
    adopted_by: string | null;
  }[];
  warnings: { code: string; entity: EntityKind; third_id: string; platform_id: string | null; message: string }[];
  withheld: { id: string; entity: EntityKind; op: string; third_id: string; description: string; why: string; due_at: string | null }[];
  quarantine: { source: string; entity: EntityKind; source_id: string | null; location: string; reason: string; message: string }[];
  /** Source records the plan can neither create nor update (issue 15). */
  blocked: BlockedJson[];
  /** Issue 18: members not created yet (start_date) and members gone by end_date. */
  lifecycle: {
    scheduled: { third_id: string; display_name: string; start_date: string; start_at: string; create_on: string }[];
    ended: { third_id: string; display_name: string; end_date: string; end_at: string; action: string }[];
    /** Issue 45: members whose end date is ahead, with what happens on the day (remove or suspend). */
    ending: { third_id: string; display_name: string; end_date: string; end_at: string; action: string }[];
  };
  /** Issue 32: every source record, planned or left alone, per entity (present when the command knows the sources' records). */
  records?: ReturnType<typeof accountingToJson>;
}

/** The JSON form of one change (an element of `changes`). */
export function changeToJson(c: Change): PlanJson['changes'][number] {
  return {
    id: c.id,
    entity: c.entity,
    op: c.op,
    third_id: c.thirdId,
    platform_id: c.platformId ?? null,
    description: c.description,
    reason: c.reason,
    fields: c.fields,
    before: c.before ?? null,
    request: c.request ? { method: c.request.method, path: c.request.path, body: c.request.body ?? null } : null,
    depends_on: c.dependsOn,
    adopted_by: c.adoptedBy ?? null,
  };
}

/** The JSON document of a plan without its changes (`changes: []`, in its place among the keys). */
function planJsonFrame(plan: Plan, extras: RenderExtras): PlanJson {
  const quarantine = extras.quarantine ?? [];
  const blocked = blockedRecords(plan);
  let drift = 0;
  for (const w of plan.warnings) if (w.code === 'unpatchable_drift') drift += 1;
  return {
    format_version: plan.formatVersion,
    sync_id: plan.syncId,
    policy: plan.policy,
    created_at: plan.createdAt,
    in_sync: plan.changes.length === 0 && blocked.length === 0,
    summary: {
      ...plan.counts,
      total: plan.changes.length,
      warnings: plan.warnings.length,
      unpatchable_drift: drift,
      withheld: plan.withheld.length,
      quarantined: quarantine.length,
      blocked: blocked.length,
      scheduled: plan.lifecycle?.scheduled.length ?? 0,
      ended: plan.lifecycle?.ended.length ?? 0,
      ending: plan.lifecycle?.ending?.length ?? 0,
    },
    refusal: plan.refusal ? { guard: plan.refusal.guard, message: plan.refusal.message, ...(plan.refusal.entities ? { entities: plan.refusal.entities } : {}) } : null,
    changes: [],
    warnings: plan.warnings.map((w) => ({ code: w.code, entity: w.entity, third_id: w.thirdId, platform_id: w.platformId ?? null, message: w.message })),
    withheld: plan.withheld.map((w) => ({
      id: w.change.id,
      entity: w.change.entity,
      op: w.change.op,
      third_id: w.change.thirdId,
      description: w.change.description,
      why: w.why,
      due_at: w.dueAt ?? null,
    })),
    quarantine: quarantine.map((q) => ({ source: q.source, entity: q.entity, source_id: q.source_id ?? null, location: q.location, reason: q.reason, message: q.message })),
    blocked: blockedToJson(blocked),
    lifecycle: {
      scheduled: (plan.lifecycle?.scheduled ?? []).map((e) => ({ third_id: e.thirdId, display_name: e.displayName, start_date: e.date, start_at: e.at, create_on: e.createOn ?? '' })),
      ended: (plan.lifecycle?.ended ?? []).map((e) => ({ third_id: e.thirdId, display_name: e.displayName, end_date: e.date, end_at: e.at, action: e.action ?? 'remove' })),
      ending: (plan.lifecycle?.ending ?? []).map((e) => ({ third_id: e.thirdId, display_name: e.displayName, end_date: e.date, end_at: e.at, action: e.action ?? 'remove' })),
    },
    ...(extras.records ? { records: accountingToJson(extras.records) } : {}),
  };
}

/** The JSON document of a plan. */
export function planToJson(plan: Plan, extras: RenderExtras = {}): PlanJson {
  const doc = planJsonFrame(plan, extras);
  doc.changes = plan.changes.map(changeToJson);
  return doc;
}

/**
 * The JSON document of a plan as `JSON.stringify(planToJson(plan, extras), null, 2)` plus a newline, byte for byte,
 * in chunks: the changes are stringified one at a time, so a plan of a million changes (more text than V8's largest
 * string) is written whole, and never copied into a second object tree. `changes`: the plan's changes streamed from
 * elsewhere (a stored saved plan), `plan.changes` then only counted.
 */
export function* planJsonChunks(plan: Plan, extras: RenderExtras = {}, chunkSize = 65_536, changes: Iterable<Change> = plan.changes): Generator<string> {
  const frame = JSON.stringify(planJsonFrame(plan, extras), null, 2);
  // Top-level keys are the only ones indented by two spaces, and strings hold no raw newline: this marker is unique.
  const marker = '\n  "changes": []';
  const at = frame.indexOf(marker);
  if (plan.changes.length === 0 || at < 0) {
    yield `${frame}\n`;
    return;
  }
  yield* joinedChunks(planJsonPieces(frame, at, marker, changes), chunkSize);
}

/** The document's pieces: the frame up to its changes, each change indented as JSON.stringify would, the frame's rest. */
function* planJsonPieces(frame: string, at: number, marker: string, changes: Iterable<Change>): Generator<string> {
  yield `${frame.slice(0, at)}\n  "changes": [`;
  let i = 0;
  for (const change of changes) yield `${i++ === 0 ? '' : ','}\n    ${JSON.stringify(changeToJson(change), null, 2).replace(/\n/g, '\n    ')}`;
  yield `\n  ]${frame.slice(at + marker.length)}\n`;
}
