/**
 * Forgetting a person (issue 29 point 4, GDPR Article 17): their name, e-mail and phone leave every table of the state
 * DB that holds them (the mirror's copy of their platform record, record history, run summaries, pending approvals,
 * the phone cache, ownership's pending contacts and the adoption log); only the ids correctness needs stay. The
 * account is listed in `forgotten_members`, so a later refresh stores its personal fields blank. The freed bytes are
 * zeroed (secure_delete), the file rewritten (VACUUM) and the WAL truncated.
 */
import { readStoredFields } from './history-fields.js';
import { insertHistoryBatch } from './history-batches.js';
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Migration } from './migrations/types.js';

/** Migration 060: the accounts whose personal fields the mirror stores blank. */
export const migration060: Migration = {
  version: 60,
  name: 'forgotten-members',
  sql: `
CREATE TABLE forgotten_members (
  account_id    TEXT PRIMARY KEY,
  third_user_id TEXT NOT NULL,
  forgotten_at  TEXT NOT NULL
) STRICT;
`,
};

/** The fields of a platform member that name or reach a person. */
export const PERSONAL_MEMBER_FIELDS = ['display_name', 'email', 'phone'] as const;

const inList = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/** What replaces a forgotten value inside run summaries and approvals. */
export const FORGOTTEN = '[forgotten]';

/** A mirrored member with its personal fields blank (the ids, status, department and roles kept). */
export function blankPersonalFields<T extends Record<string, unknown>>(record: T): T {
  const copy: Record<string, unknown> = { ...record };
  for (const f of PERSONAL_MEMBER_FIELDS) if (f in copy) copy[f] = '';
  return copy as T;
}

/** The account ids listed in forgotten_members (a small table: one row per forgotten person). */
export function forgottenAccounts(db: Database.Database): Set<string> {
  return new Set(db.prepare('SELECT account_id FROM forgotten_members').pluck().all() as string[]);
}

/** Whom to forget: their source ids and platform ids (from the selector, as `orgsync history` resolves it). */
export interface ForgetTarget {
  sourceIds: readonly string[];
  platformIds: readonly string[];
  /**
   * Personal values to erase beyond those the state DB still links to the ids: the e-mail the operator gave as the
   * selector (issue 44: a person forgotten before has a blank mirror record, yet an older run's error may still quote
   * their e-mail, as a trigger's selector did).
   */
  values?: readonly string[];
}

/** The forgotten accounts whose account id or source id is one of `ids` (a person forgotten before). */
export function forgottenMatching(db: Database.Database, ids: readonly string[]): { accountId: string; thirdUserId: string; forgottenAt: string }[] {
  if (ids.length === 0) return [];
  const rows = db
    .prepare(`SELECT account_id, third_user_id, forgotten_at FROM forgotten_members WHERE account_id IN (${inList(ids.length)}) OR third_user_id IN (${inList(ids.length)})`)
    .all([...ids, ...ids]) as { account_id: string; third_user_id: string; forgotten_at: string }[];
  return rows.map((r) => ({ accountId: r.account_id, thirdUserId: r.third_user_id, forgottenAt: r.forgotten_at }));
}

/** Whether the record history holds entries of a member with one of these source or platform ids. */
export function hasMemberHistory(db: Database.Database, target: Pick<ForgetTarget, 'sourceIds' | 'platformIds'>): boolean {
  return historyRows(db, target, '1').length > 0;
}

/** What was changed, by place; `values` is how many distinct personal values were scrubbed. */
export interface ForgetReport {
  values: number;
  mirrorMembers: number;
  historyEntries: number;
  runs: number;
  approvals: number;
  /** Pending or approved approvals that can no longer be applied (their signed plan named the person). */
  approvalsWithdrawn: string[];
  phoneCache: number;
  /** The WAL was checkpointed and truncated (false: another process held a read transaction). */
  walTruncated: boolean;
}

/** The person's personal values the state DB may hold: from the mirror and from the record history's fields. */
function personalValues(db: Database.Database, target: ForgetTarget): string[] {
  const values = new Set<string>();
  const ids = [...target.platformIds];
  if (ids.length > 0) {
    for (const m of db.prepare(`SELECT * FROM mirror_members WHERE account_id IN (${inList(ids.length)})`).all(ids) as Record<string, unknown>[]) {
      const extra = typeof m.extra === 'string' ? (JSON.parse(m.extra) as Record<string, unknown>) : {};
      for (const f of PERSONAL_MEMBER_FIELDS) for (const v of [m[f], extra[f]]) if (typeof v === 'string') values.add(v);
    }
  }
  for (const fields of historyRows(db, target, 'fields') as string[]) {
    const changes = readStoredFields(fields);
    for (const f of PERSONAL_MEMBER_FIELDS) for (const v of [changes[f]?.old, changes[f]?.new]) if (typeof v === 'string') values.add(v);
  }
  for (const v of target.values ?? []) values.add(v);
  const out = new Set<string>();
  for (const v of values) {
    if (v.trim().length < 3) continue; // "" or a stray initial would scrub unrelated text
    out.add(v);
    out.add(v.toLowerCase());
    out.add(JSON.stringify(v).slice(1, -1));
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/** The condition on record_history rows of the target's ids, with its values; undefined when it names no id. */
function memberHistoryWhere(target: Pick<ForgetTarget, 'sourceIds' | 'platformIds'>): { where: string; args: string[] } | undefined {
  const s = [...target.sourceIds];
  const p = [...target.platformIds];
  const ids = [s.length ? `source_id IN (${inList(s.length)})` : '', p.length ? `platform_id IN (${inList(p.length)})` : ''].filter(Boolean).join(' OR ');
  return ids === '' ? undefined : { where: `entity = 'members' AND (${ids})`, args: s.concat(p) };
}

/** A column of the member history rows of the target. */
function historyRows(db: Database.Database, target: Pick<ForgetTarget, 'sourceIds' | 'platformIds'>, column: string): unknown[] {
  const rows = memberHistoryWhere(target);
  return rows === undefined ? [] : db.prepare(`SELECT ${column} FROM record_history WHERE ${rows.where}`).pluck().all(rows.args);
}

/** Replaces every value in `columns` of `table`; returns the rows changed. */
function scrub(db: Database.Database, table: string, key: string, columns: readonly string[], values: readonly string[]): Set<string> {
  const changed = new Set<string>();
  for (const col of columns) {
    const update = db.prepare(`UPDATE ${table} SET ${col} = replace(${col}, ?, '${FORGOTTEN}') WHERE instr(${col}, ?) > 0 RETURNING ${key}`).pluck();
    for (const v of values) for (const k of update.all(v, v) as string[]) changed.add(k);
  }
  return changed;
}

/** The mirror's copies of the person: personal fields blank, listed as forgotten. */
function forgetInMirror(db: Database.Database, target: ForgetTarget, at: string): number {
  let n = 0;
  const select = db.prepare('SELECT third_user_id FROM mirror_members WHERE account_id = ?').pluck();
  // The fields the platform sent that this version has no column for (extra) may name the person too: dropped.
  const update = db.prepare(`UPDATE mirror_members SET display_name = '', email = '', phone = '', extra = NULL WHERE account_id = ?`);
  const remember = db.prepare('INSERT INTO forgotten_members (account_id, third_user_id, forgotten_at) VALUES (?, ?, ?) ON CONFLICT (account_id) DO NOTHING');
  for (const id of target.platformIds) {
    const third = select.get(id) as string | undefined;
    if (third === undefined) continue;
    n += update.run(id).changes;
    remember.run(id, third !== '' ? third : (target.sourceIds[0] ?? ''), at);
  }
  return n;
}

/** The record history: the person's entries keep ids, run, operation and result; one `forget` entry is added. */
function forgetInHistory(db: Database.Database, target: ForgetTarget, now: number): number {
  const rows = memberHistoryWhere(target);
  if (rows === undefined) return 0; // an e-mail no record carries any more: nothing to enter the forget under
  const n = db.prepare(`UPDATE record_history SET description = '${FORGOTTEN}', fields = '{}', message = NULL WHERE ${rows.where}`).run(rows.args).changes;
  const entry = { entity: 'members', source_id: target.sourceIds[0] ?? '', platform_id: target.platformIds[0] ?? null, op: 'forget', description: 'personal data forgotten', fields: '{}', result: 'forgotten', message: null };
  insertHistoryBatch(db, { at: now, runId: randomUUID(), trigger: 'forget' }, [entry]);
  return n;
}

/**
 * The source snapshots of delta reads (issue 31) whose raw records still hold one of `values` are dropped whole (a
 * record alone could not go: a delta run would take the person for gone from the source); their sources are read in
 * full by the next run.
 */
function dropSourceSnapshotsHolding(db: Database.Database, values: readonly string[]): void {
  const holding = db.prepare('SELECT DISTINCT source FROM source_snapshot WHERE instr(lower(raw), lower(?)) > 0').pluck();
  const sources = new Set<string>();
  for (const v of values) for (const source of holding.all(v) as string[]) sources.add(source);
  for (const table of ['source_snapshot', 'source_snapshot_staging', 'source_snapshot_head']) {
    const drop = db.prepare(`DELETE FROM ${table} WHERE source = ?`);
    for (const source of sources) drop.run(source);
  }
}

/**
 * Removes the person's personal data from the state DB (one write transaction: it waits the busy timeout for a
 * daemon's write, never interleaves with it), then zeroes and compacts what it freed. `db` must be opened by
 * openStateDb (migrations applied).
 */
export function forgetPerson(db: Database.Database, target: ForgetTarget, now: number): ForgetReport {
  db.pragma('secure_delete = ON');
  // VACUUM builds the new file in SQLite's temporary files (TMPDIR), not in memory: at a million members that is a
  // gigabyte, more than the chart's memory limit (issue 42). The person's data is gone from it before it is built.
  const at = new Date(now).toISOString();
  const run = db.transaction(() => {
    const values = personalValues(db, target);
    const mirrorMembers = forgetInMirror(db, target, at);
    const historyEntries = forgetInHistory(db, target, now);
    const runs = scrub(db, 'runs', 'id', ['summary', 'error'], values).size;
    // Other records' entries may quote the person too (a conflict's message naming the account in the way).
    const otherEntries = scrub(db, 'record_history', 'seq', ['description', 'message'], values).size;
    const approvals = scrub(db, 'pending_approvals', 'digest', ['saved_plan', 'context', 'message'], values);
    // Issue 31: a plan too long for saved_plan is in chunks (whole values each, so a person's value is in one chunk).
    const chunked = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'pending_approval_chunks'").get() !== undefined;
    if (chunked) for (const d of scrub(db, 'pending_approval_chunks', 'digest', ['chunk'], values)) approvals.add(d);
    // A signed plan that named the person no longer verifies: it cannot be applied any more.
    const withdrawn = db.prepare(`UPDATE pending_approvals SET status = 'superseded' WHERE digest = ? AND status IN ('pending', 'approved') RETURNING digest`).pluck();
    const approvalsWithdrawn: string[] = [];
    for (const d of approvals) if (withdrawn.get(d) !== undefined) approvalsWithdrawn.push(d);
    const phones = values.filter((v) => v.startsWith('+'));
    let phoneCache = 0;
    for (const ph of phones) phoneCache += db.prepare('DELETE FROM phone_cache WHERE e164 = ? OR raw = ?').run(ph, ph).changes;
    dropSourceSnapshotsHolding(db, values);
    const s = [...target.sourceIds];
    if (s.length > 0) {
      db.prepare(`UPDATE pending_creates SET contact = '' WHERE entity = 'members' AND third_id IN (${inList(s.length)})`).run(s);
      db.prepare(`UPDATE adoption_log SET detail = '' WHERE entity = 'members' AND third_id IN (${inList(s.length)})`).run(s);
    }
    return { values: values.length, mirrorMembers, historyEntries: historyEntries + otherEntries, runs, approvals: approvals.size, approvalsWithdrawn, phoneCache };
  });
  const report = run.immediate();
  db.exec('VACUUM');
  const [checkpoint] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
  return { ...report, walTruncated: checkpoint?.busy === 0 };
}
