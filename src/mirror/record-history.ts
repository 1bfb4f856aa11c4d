/**
 * Per-record history (issue 22): every write orgsync makes, kept in the state DB for `state.history_days`.
 * `orgsync history`, `orgsync explain` and the runs read it; contact values are stored masked, never in clear.
 */
import { insertHistoryBatch } from './history-batches.js';
import { readStoredFields, storedFields, type FieldChange } from './history-fields.js';
import type Database from 'better-sqlite3';
import type { Change, EntityKind, PlanValue } from '../domain/index.js';
import { isPlanRef } from '../domain/index.js';
import { maskContactValue } from '../shared/personal.js';
import { redact } from '../shared/redact.js';
import type { Mirror } from './mirror.js';
import type { OwnershipStore } from './ownership.js';

/** Fields whose values are contact data: stored and shown masked (`a***@example.com`, `+49******78`). */
export const CONTACT_FIELDS: readonly string[] = ['email', 'phone'];

/** Masks an e-mail (first character and domain kept) or a phone number (first 3 and last 2 characters kept). */
export function maskContact(value: string): string {
  // One masking for the history, the logs and the run history (src/shared/personal.ts).
  return maskContactValue(value);
}

/** Masks every e-mail address and E.164 phone number in a text (descriptions and messages of recorded writes). */
export function maskContactsIn(text: string): string {
  return text.replace(/[^\s"'<>()@,;]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g, (m) => maskContact(m)).replace(/\+\d{7,15}\b/g, (m) => maskContact(m));
}

/** A change's outcome as the applier reports it (src/applier ChangeResult; mirror may not import the applier). */
export interface WriteResult {
  change: Change;
  status: string;
  message?: string;
  platformId?: string;
}

export type { FieldChange } from './history-fields.js';

/** One recorded write. */
export interface RecordHistoryEntry {
  /** RFC 3339. */
  at: string;
  entity: EntityKind;
  sourceId: string;
  platformId: string | null;
  runId: string;
  trigger: string;
  op: string;
  description: string;
  fields: Record<string, FieldChange>;
  /** `applied`, `adopted`, `failed`, `conflict`. */
  result: string;
  message: string | null;
  /** The digest of the approval that let a guarded plan through (issue 20), when there was one. */
  approvalDigest: string | null;
}

interface Row {
  at: number;
  entity: EntityKind;
  source_id: string;
  platform_id: string | null;
  run_id: string;
  trigger: string;
  op: string;
  description: string;
  fields: string;
  result: string;
  message: string | null;
  approval_digest: string | null;
}

const shown = (field: string, v: PlanValue | undefined): string | null => {
  if (v === undefined || v === null) return null;
  if (isPlanRef(v)) return '(created in this run)';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return CONTACT_FIELDS.includes(field) ? maskContact(s) : s;
};

/** The fields a change set, old -> new (contacts masked). */
export function fieldChanges(result: Pick<WriteResult, 'change'>): Record<string, FieldChange> {
  const c = result.change;
  const out: Record<string, FieldChange> = {};
  for (const [k, v] of Object.entries(c.fields)) {
    if (k === 'metadata') continue;
    out[k] = { old: shown(k, c.before?.[k]), new: shown(k, v) };
  }
  return out;
}

/** Which results are writes worth recording: those that reached (or were refused by) the platform. */
export const RECORDED_STATUSES: readonly string[] = ['applied', 'adopted', 'failed', 'conflict'];

/** A selector resolved to the keys history is stored under. */
export interface HistoryKeys {
  sourceIds: readonly string[];
  platformIds: readonly string[];
}

/** The columns of an entry read back with its batch's. */
const ENTRY_COLUMNS = 'h.seq, b.at, h.entity, h.source_id, h.platform_id, b.run_id, b.trigger, h.op, h.description, h.fields, h.result, h.message, b.approval_digest';

/** The record history table. */
export class RecordHistory {
  constructor(private readonly db: Database.Database) {}

  /** Records the writes among `results` of run `runId` (one transaction). */
  recordResults(results: readonly WriteResult[], run: { runId: string; trigger: string; at: number; approvalDigest?: string }): number {
    const rows = results.filter((r) => RECORDED_STATUSES.includes(r.status) && (r.change.request !== undefined || r.status === 'adopted'));
    if (rows.length === 0) return 0;
    const entries = rows.map((r) => ({
      entity: r.change.entity,
      source_id: r.change.thirdId,
      platform_id: r.platformId ?? r.change.platformId ?? null,
      op: r.change.op,
      description: maskContactsIn(redact(r.change.description)),
      fields: storedFields(fieldChanges(r)),
      result: r.status,
      message: r.message === undefined ? null : maskContactsIn(redact(r.message)),
    }));
    this.db.transaction(() => insertHistoryBatch(this.db, run, entries))();
    return rows.length;
  }

  /** Records one write made outside a plan (`orgsync adopt`, `orgsync release`); descriptions are masked. */
  recordEntry(e: Omit<RecordHistoryEntry, 'at' | 'approvalDigest'> & { at: number }): void {
    const entry = {
      entity: e.entity,
      source_id: e.sourceId,
      platform_id: e.platformId,
      op: e.op,
      description: maskContactsIn(redact(e.description)),
      fields: storedFields(e.fields),
      result: e.result,
      message: e.message === null ? null : maskContactsIn(redact(e.message)),
    };
    this.db.transaction(() => insertHistoryBatch(this.db, { at: e.at, runId: e.runId, trigger: e.trigger }, [entry]))();
  }

  /** Entries of a record, newest first; `since` (ms epoch) keeps only later ones; `limit` caps the count. */
  entries(keys: HistoryKeys, options: { since?: number; limit?: number } = {}): RecordHistoryEntry[] {
    const conds: string[] = [];
    const params: unknown[] = [];
    if (keys.sourceIds.length > 0) {
      conds.push(`h.source_id IN (${keys.sourceIds.map(() => '?').join(', ')})`);
      for (const id of keys.sourceIds) params.push(id);
    }
    if (keys.platformIds.length > 0) {
      conds.push(`h.platform_id IN (${keys.platformIds.map(() => '?').join(', ')})`);
      for (const id of keys.platformIds) params.push(id);
    }
    if (conds.length === 0) return [];
    let sql = `SELECT ${ENTRY_COLUMNS} FROM record_history h JOIN history_batches b ON b.id = h.batch WHERE (${conds.join(' OR ')})`;
    if (options.since !== undefined) {
      sql += ' AND b.at >= ?';
      params.push(options.since);
    }
    sql += ' ORDER BY b.at DESC, h.seq DESC';
    if (options.limit !== undefined) sql += ` LIMIT ${Math.max(0, Math.floor(options.limit))}`;
    return (this.db.prepare(sql).all(params) as Row[]).map(toEntry);
  }

  /** Deletes entries older than `before` (ms epoch); returns how many. */
  prune(before: number): number {
    return this.db.transaction(() => {
      const n = this.db.prepare('DELETE FROM record_history WHERE batch IN (SELECT id FROM history_batches WHERE at < ?)').run(before).changes;
      this.db.prepare('DELETE FROM history_batches WHERE at < ?').run(before);
      return n;
    })();
  }

  /** Number of rows (tests, benchmarks). */
  count(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM record_history').get() as { n: number }).n;
  }
}

function toEntry(r: Row): RecordHistoryEntry {
  return {
    at: new Date(r.at).toISOString(),
    entity: r.entity,
    sourceId: r.source_id,
    platformId: r.platform_id,
    runId: r.run_id,
    trigger: r.trigger,
    op: r.op,
    description: r.description,
    fields: readStoredFields(r.fields),
    result: r.result,
    message: r.message,
    approvalDigest: r.approval_digest,
  };
}

/** One entry as a text line (history and explain). */
export function historyLine(e: RecordHistoryEntry): string {
  const fields = Object.entries(e.fields)
    .map(([k, v]) => `${k} ${v.old === null ? '(none)' : JSON.stringify(v.old)} -> ${v.new === null ? '(none)' : JSON.stringify(v.new)}`)
    .join(', ');
  return `${e.at}  ${e.op} ${e.result}${e.message && e.result !== 'applied' && e.result !== 'adopted' ? ` (${e.message})` : ''}  ${e.entity} ${e.sourceId || '(no source id)'}${e.platformId ? ` [${e.platformId}]` : ''}  run ${e.runId} (${e.trigger})${e.approvalDigest ? ` approval ${e.approvalDigest}` : ''}${fields ? `\n    ${fields}` : ''}`;
}

/** One entry as JSON (history --output json, the daemon's endpoint). */
export function historyJson(e: RecordHistoryEntry): Record<string, unknown> {
  return {
    at: e.at,
    entity: e.entity,
    source_id: e.sourceId,
    platform_id: e.platformId,
    run_id: e.runId,
    trigger: e.trigger,
    op: e.op,
    description: e.description,
    fields: e.fields,
    result: e.result,
    message: e.message,
    approval_digest: e.approvalDigest,
  };
}

/** The keys a history selector (source id, platform id, e-mail or department path) stands for, from the mirror. */
export function historyKeysFor(selector: string, mirror: Pick<Mirror, 'all' | 'scanMembers'>, ownership: Pick<OwnershipStore, 'sourceIdOfAccount'>): HistoryKeys {
  const sel = selector.trim();
  const sourceIds = new Set<string>();
  const platformIds = new Set<string>();
  if (sel.includes('@')) {
    const email = sel.toLowerCase();
    // One pass over the mirror's members, a window at a time.
    for (const m of mirror.scanMembers()) {
      if (m.email.toLowerCase() !== email) continue;
      platformIds.add(m.account_id);
      const third = ownership.sourceIdOfAccount(m.account_id) ?? m.third_user_id;
      if (third) sourceIds.add(third);
    }
    return { sourceIds: [...sourceIds], platformIds: [...platformIds] };
  }
  if (sel !== '') {
    sourceIds.add(sel);
    platformIds.add(sel);
  }
  const want = sel.split('/').map((s) => s.trim()).filter((s) => s !== '').join('/');
  if (sel.includes('/') && want !== '') {
    for (const d of mirror.all('departments')) {
      const full = d.path.split('/').filter((s) => s !== '').join('/');
      if (full === want || full.split('/').slice(1).join('/') === want) {
        platformIds.add(d.id);
        if (d.third_department_id) sourceIds.add(d.third_department_id);
      }
    }
  }
  return { sourceIds: [...sourceIds], platformIds: [...platformIds] };
}
