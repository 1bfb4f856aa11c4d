/** The two renderings of a Plan: a text table per entity and operation, and one stable JSON document. */
import type { BlockedRecord, Change, EntityKind, Plan, PlanValue, QuarantineEntry } from '../domain/index.js';
import { blockedRecords, CHANGE_OPS, ENTITY_KINDS } from '../domain/index.js';

const SIGN: Record<string, string> = { create: '+', adopt: '@', update: '~', move: '>', remove: '-' };

/** Extra facts the renderings show beside the plan. */
export interface RenderExtras {
  quarantine?: readonly QuarantineEntry[];
  /** Print every row (`plan --full`); by default at most ROWS_PER_GROUP rows per entity and operation. */
  full?: boolean;
}

/** Rows of one entity and operation the text plan prints unless `--full`; the rest are counted. */
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

/** Text: one table per entity and operation, then warnings, withheld changes, quarantine and a summary line. */
export function renderPlanText(plan: Plan, extras: RenderExtras = {}): string {
  const lines: string[] = [];
  // The summary first (a 20,000-row plan is read from the top), and again at the end.
  const total = summaryText(plan);
  if (plan.changes.length > 0) lines.push(total, '');
  const groups = new Map<string, Change[]>();
  for (const c of plan.changes) {
    const k = `${c.entity} ${c.op}`;
    const list = groups.get(k);
    if (list) list.push(c);
    else groups.set(k, [c]);
  }
  for (const entity of ENTITY_KINDS) {
    for (const op of CHANGE_OPS) {
      const list = groups.get(`${entity} ${op}`);
      if (!list) continue;
      lines.push(`${entity} ${op} (${list.length})`);
      const keyWidth = Math.min(40, Math.max(...list.map((c) => (c.thirdId || c.platformId || '').length), 3));
      const shown = extras.full ? list : list.slice(0, ROWS_PER_GROUP);
      for (const c of shown) {
        const detail = changeDetail(c);
        lines.push(`  ${SIGN[op]} ${(c.thirdId || c.platformId || '').padEnd(keyWidth)}  ${c.description}${detail ? `  [${detail}]` : ''}  (${c.reason})`);
      }
      if (shown.length < list.length) lines.push(`  ... and ${list.length - shown.length} more ${entity} to ${op} (--full prints all)`);
      lines.push('');
    }
  }
  if (plan.warnings.length > 0) {
    lines.push(`warnings (${plan.warnings.length})`);
    for (const w of plan.warnings) lines.push(`  ! ${w.code} ${w.entity} ${w.thirdId || w.platformId || ''}: ${w.message}`);
    lines.push('');
  }
  if (plan.withheld.length > 0) {
    lines.push(`withheld (${plan.withheld.length})`);
    for (const w of plan.withheld) lines.push(`  . ${w.change.entity} ${w.change.op} ${w.change.thirdId || w.change.platformId || ''}: ${w.change.description} (${w.why}${w.dueAt ? `, due ${w.dueAt}` : ''})`);
    lines.push('');
  }
  const scheduled = plan.lifecycle?.scheduled ?? [];
  if (scheduled.length > 0) {
    lines.push(`scheduled (${scheduled.length})`);
    for (const e of scheduled) lines.push(`  > members ${e.thirdId}: "${e.displayName}" starts ${e.date}; created from ${e.createOn}`);
    lines.push('');
  }
  const ended = plan.lifecycle?.ended ?? [];
  if (ended.length > 0) {
    lines.push(`ended (${ended.length})`);
    for (const e of ended) lines.push(`  < members ${e.thirdId}: "${e.displayName}" end_date ${e.date} has passed: ${e.action === 'not_created' ? 'not created' : e.action === 'suspend' ? 'suspended' : 'removed'}`);
    lines.push('');
  }
  if (extras.quarantine && extras.quarantine.length > 0) {
    lines.push(`quarantined (${extras.quarantine.length})`);
    for (const q of extras.quarantine) lines.push(`  ? ${q.entity} ${q.source_id ?? ''} ${q.source} ${q.location}: ${q.reason}: ${q.message}`);
    lines.push('');
  }
  lines.push(...blockedLines(blockedRecords(plan)));
  if (plan.refusal) lines.push(`REFUSED by ${plan.refusal.guard}: ${plan.refusal.message}`);
  lines.push(total);
  return `${lines.join('\n')}\n`;
}

/** `Plan: ... (positions 1, departments 2, members 3) 1 warning(s), 1 unpatchable drift.` */
function summaryText(plan: Plan): string {
  const perEntity = ENTITY_KINDS.map((e) => `${e} ${CHANGE_OPS.reduce((n, op) => n + plan.counts[e][op], 0)}`).join(', ');
  const drift = plan.warnings.filter((w) => w.code === 'unpatchable_drift').length;
  return `${summaryLine(plan)}${plan.changes.length > 0 ? ` (${perEntity})` : ''}${plan.warnings.length ? ` ${plan.warnings.length} warning(s)${drift ? `, ${drift} unpatchable drift` : ''}.` : ''}`;
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
  summary: Record<EntityKind, Record<string, number>> & { total: number; warnings: number; unpatchable_drift: number; withheld: number; quarantined: number; blocked: number; scheduled: number; ended: number };
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
  };
}

/** The JSON document of a plan. */
export function planToJson(plan: Plan, extras: RenderExtras = {}): PlanJson {
  const quarantine = extras.quarantine ?? [];
  const blocked = blockedRecords(plan);
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
      unpatchable_drift: plan.warnings.filter((w) => w.code === 'unpatchable_drift').length,
      withheld: plan.withheld.length,
      quarantined: quarantine.length,
      blocked: blocked.length,
      scheduled: plan.lifecycle?.scheduled.length ?? 0,
      ended: plan.lifecycle?.ended.length ?? 0,
    },
    refusal: plan.refusal ? { guard: plan.refusal.guard, message: plan.refusal.message, ...(plan.refusal.entities ? { entities: plan.refusal.entities } : {}) } : null,
    changes: plan.changes.map((c) => ({
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
    })),
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
    },
  };
}
