/**
 * The member stage of a run (issue 42): the sources' members in a temporary table of the state DB's connection, so
 * a million members cost the heap a window at a time, wherever they are read. SQLite keeps temporary tables in a
 * file of its own under TMPDIR (not the state DB, which does not grow by them), removed when the connection closes;
 * a read-only command's private copy stages alike. desired/settle-members.ts asks the questions of MemberStage;
 * the planner reads the settled members back (StagedMembers) in staging order, a window at a time, or by source id.
 */
import Database from 'better-sqlite3';
import type { DesiredMember, DesiredMembers, MemberStage, MemberTally, SharedContact, SourceMember, StagedMember } from '../domain/desired.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OrgsyncError } from '../shared/errors.js';
import { STATE_DB_CACHE_KIB } from './db.js';
import { freeMegabytes, isFullError } from './db-faults.js';
import { keysetPages } from './keyset.js';

/** Members read a window at a time. */
export const STAGE_WINDOW = 500;
/** Members written in one transaction while sources are read. */
const WRITE_BATCH = 200;

const COLUMNS = ['source_id', 'display_name', 'email', 'phone', 'title', 'department_source_id', 'status', 'start_date', 'start_at', 'end_date', 'end_at', 'source', 'location', 'field_sources'] as const;
const SELECT = `seq, rank, ${COLUMNS.join(', ')}`;
/** The columns a staged member is read back from, of the table named `s` (for queries that join it). */
export const STAGED_COLUMNS = ['seq', 'rank', ...COLUMNS].map((c) => `s.${c}`).join(', ');

type Row = [number, number, string, string, string | null, string | null, string | null, string | null, string | null, string | null, number | null, string | null, number | null, string, string, string | null];

const SCHEMA = `
CREATE TEMP TABLE IF NOT EXISTS staged_members (
  seq INTEGER PRIMARY KEY,
  rank INTEGER NOT NULL,
  source_id TEXT NOT NULL,
  display_name TEXT NOT NULL,
  email TEXT,
  phone TEXT,
  title TEXT,
  department_source_id TEXT,
  status TEXT,
  start_date TEXT,
  start_at INTEGER,
  end_date TEXT,
  end_at INTEGER,
  source TEXT NOT NULL,
  location TEXT NOT NULL,
  field_sources TEXT
);
DROP INDEX IF EXISTS temp.staged_members_by_id;
DELETE FROM staged_members;
`;

/** A member as a row of the stage, in COLUMNS order. */
function toRow(m: SourceMember): unknown[] {
  const o = m.origin;
  return [m.source_id, m.display_name, m.email ?? null, m.phone ?? null, m.title ?? null, m.department_source_id ?? null, m.status ?? null, m.start_date ?? null, m.start_at ?? null, m.end_date ?? null, m.end_at ?? null, o?.source ?? '', o?.location ?? '', o?.fieldSources ? JSON.stringify(o.fieldSources) : null];
}

/** The member of a row, its keys in the order a source's mapping gives them. */
function fromRow(r: Row): SourceMember {
  const m: SourceMember = { source_id: r[2], display_name: r[3], origin: { source: r[13], location: r[14], ...(r[15] !== null ? { fieldSources: JSON.parse(r[15]) as Record<string, string> } : {}) } };
  if (r[4] !== null) m.email = r[4];
  if (r[5] !== null) m.phone = r[5];
  if (r[6] !== null) m.title = r[6];
  if (r[7] !== null) m.department_source_id = r[7];
  if (r[8] !== null) m.status = r[8] as SourceMember['status'];
  if (r[9] !== null) m.start_date = r[9];
  if (r[10] !== null) m.start_at = r[10];
  if (r[11] !== null) m.end_date = r[11];
  if (r[12] !== null) m.end_at = r[12];
  return m;
}

const staged = (r: Row): StagedMember => ({ seq: r[0], rank: r[1], member: fromRow(r) });

/** The stage's rows in staging order, `size` at a time (`next` takes the last seq read and a limit). */
const seqWindows = (next: Database.Statement, size: number): Generator<Row[]> =>
  keysetPages((after: number, limit) => guarded(() => next.all(after, limit) as Row[]), (r) => r[0], 0, size);

/**
 * A write of the stage that failed for a full disk, told as SQLite's temporary files' disk (under TMPDIR, not the
 * state DB's): which folder, how much is free, what to set.
 */
function stagingFault(err: unknown): unknown {
  if (!isFullError(err)) return err;
  const dir = tmpdir();
  const free = freeMegabytes(join(dir, 'x'));
  return new OrgsyncError(
    'STATE_FULL',
    `staging the sources' members in SQLite's temporary files under ${dir}: the disk is full${free !== undefined ? ` (${free} MB free)` : ''}; point TMPDIR (or SQLITE_TMPDIR) at a folder with room (about 300 bytes a member; the Helm chart mounts an emptyDir at /tmp) and run again: nothing was written to the platform or the state DB by this read`,
    { cause: err },
  );
}

/** `read` with a full disk told as the stage's (its indexes, sorts and groupings spill to the same temporary files). */
function guarded<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw stagingFault(err);
  }
}

/** A row of STAGED_COLUMNS as a desired member. */
export const stagedDesired = (r: readonly unknown[]): DesiredMember => desired(r as Row);

/** A staged member as a desired one: a source that says nothing of its status has it active. */
function desired(r: Row): DesiredMember {
  const m = fromRow(r);
  m.status ??= 'active';
  return m as DesiredMember;
}

/** Rows in consecutive groups of equal `key`. */
function groupRows(rows: readonly Row[], key: (r: Row) => string): StagedMember[][] {
  const out: StagedMember[][] = [];
  let last: string | undefined;
  for (const r of rows) {
    const k = key(r);
    if (k !== last || out.length === 0) out.push([]);
    out[out.length - 1]!.push(staged(r));
    last = k;
  }
  return out;
}

/**
 * A stage in a private temporary database of its own (SQLite's empty file name: on disk under TMPDIR, removed when
 * closed), for reads outside a run (`sources check`, `forget`): a million members checked in bounded memory.
 */
export function privateMemberStage(): SqliteMemberStage {
  const db = new Database('');
  db.pragma(`cache_size = -${STATE_DB_CACHE_KIB}`);
  return openMemberStage(db);
}

/**
 * Opens the connection's stage, emptied (a daemon's next run starts from nothing). Its members are written in
 * batches as they come and read back once the sources are read.
 */
export function openMemberStage(db: Database.Database): SqliteMemberStage {
  // The temporary database's page cache as small as the state DB's (SQLite's default; better-sqlite3 builds 16 MB):
  // its pages are read in order and the OS caches the file.
  db.pragma(`temp.cache_size = -${STATE_DB_CACHE_KIB}`);
  db.exec(SCHEMA);
  return new SqliteMemberStage(db);
}

/** The stage over the connection's `staged_members` table. */
export class SqliteMemberStage implements MemberStage {
  private readonly pending: unknown[][] = [];
  private indexed = false;
  private readonly insert: Database.Statement;
  private readonly writeBatch: (rows: unknown[][]) => void;

  constructor(readonly db: Database.Database) {
    this.insert = db.prepare(`INSERT INTO staged_members (rank, ${COLUMNS.join(', ')}) VALUES (${['?', ...COLUMNS.map(() => '?')].join(', ')})`);
    this.writeBatch = db.transaction((rows: unknown[][]) => {
      for (const r of rows) this.insert.run(r);
    });
  }

  add(rank: number, member: SourceMember): void {
    const row = toRow(member);
    row.unshift(rank);
    this.pending.push(row);
    if (this.pending.length >= WRITE_BATCH) this.flush();
  }

  /** Writes what `add` holds, and indexes the table by source id once the sources are read. */
  private ready(): Database.Database {
    this.flush();
    if (!this.indexed) {
      guarded(() => this.db.exec('CREATE INDEX IF NOT EXISTS temp.staged_members_by_id ON staged_members (source_id, rank)'));
      this.indexed = true;
    }
    return this.db;
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    guarded(() => this.writeBatch(this.pending));
    this.pending.length = 0;
  }

  count(): number {
    return guarded(() => this.ready().prepare('SELECT count(*) FROM staged_members').pluck().get() as number);
  }

  repeatedInSource(): StagedMember[][] {
    const rows = guarded(
      () =>
        this.ready()
          .prepare(`SELECT ${SELECT} FROM staged_members WHERE (rank, source_id) IN (SELECT rank, source_id FROM staged_members GROUP BY rank, source_id HAVING count(*) > 1) ORDER BY rank, source_id, seq`)
          .raw()
          .all() as Row[],
    );
    return groupRows(rows, (r) => `${r[1]}\u0000${r[2]}`);
  }

  withIds(ids: ReadonlySet<string>): StagedMember[] {
    if (ids.size === 0) return [];
    const rows = guarded(() => this.ready().prepare(`SELECT ${SELECT} FROM staged_members WHERE source_id IN (SELECT value FROM json_each(?)) ORDER BY seq`).raw().all(JSON.stringify([...ids])) as Row[]);
    return rows.map(staged);
  }

  /** Groups of the ids several sources gave, a window of ids at a time (each group whole). */
  *sharedIds(): Generator<StagedMember[]> {
    const db = this.ready();
    const ids = db.prepare('SELECT source_id FROM staged_members WHERE source_id > ? GROUP BY source_id HAVING count(*) > 1 ORDER BY source_id LIMIT ?').pluck();
    const rowsOf = db.prepare(`SELECT ${SELECT} FROM staged_members WHERE source_id IN (SELECT value FROM json_each(?)) ORDER BY source_id, seq`).raw();
    const windows = keysetPages((after: string, limit) => guarded(() => ids.all(after, limit) as string[]), (id) => id, '', STAGE_WINDOW);
    for (const window of windows) yield* groupRows(guarded(() => rowsOf.all(JSON.stringify(window)) as Row[]), (r) => r[2]);
  }

  *windows(): Generator<StagedMember[]> {
    for (const rows of seqWindows(this.ready().prepare(`SELECT ${SELECT} FROM staged_members WHERE seq > ? ORDER BY seq LIMIT ?`).raw(), STAGE_WINDOW)) yield rows.map(staged);
  }

  unnamed(): StagedMember[] {
    return guarded(() => this.ready().prepare(`SELECT ${SELECT} FROM staged_members WHERE display_name = '' ORDER BY seq`).raw().all() as Row[]).map(staged);
  }

  recordCheckCandidates(departments: ReadonlySet<string> | undefined): StagedMember[] {
    const noContact = "coalesce(email, '') = '' AND coalesce(phone, '') = ''";
    const sql = departments
      ? `SELECT ${SELECT} FROM staged_members WHERE (${noContact}) OR (department_source_id IS NOT NULL AND department_source_id NOT IN (SELECT value FROM json_each(?))) ORDER BY seq`
      : `SELECT ${SELECT} FROM staged_members WHERE ${noContact} ORDER BY seq`;
    const rows = guarded(() => (departments ? this.ready().prepare(sql).raw().all(JSON.stringify([...departments])) : this.ready().prepare(sql).raw().all()) as Row[]);
    return rows.map(staged);
  }

  sharedContacts(): SharedContact[] {
    const db = this.ready();
    const out: SharedContact[] = [];
    for (const field of ['email', 'phone'] as const) {
      const live = `${field} IS NOT NULL AND ${field} <> '' AND (status IS NULL OR status <> 'left')`;
      const rows = guarded(() => db.prepare(`SELECT ${SELECT} FROM staged_members WHERE ${live} AND ${field} IN (SELECT ${field} FROM staged_members WHERE ${live} GROUP BY ${field} HAVING count(*) > 1) ORDER BY ${field}, seq`).raw().all() as Row[]);
      const at = field === 'email' ? 4 : 5;
      for (const members of groupRows(rows, (r) => r[at] as string)) out.push({ field, value: members[0]!.member[field]!, members });
    }
    return out;
  }

  drop(seqs: readonly number[]): void {
    if (seqs.length === 0) return;
    const del = this.ready().prepare('DELETE FROM staged_members WHERE seq IN (SELECT value FROM json_each(?))');
    for (let i = 0; i < seqs.length; i += 10_000) guarded(() => del.run(JSON.stringify(seqs.slice(i, i + 10_000))));
  }

  replace(seq: number, member: SourceMember): void {
    guarded(() =>
      this.ready()
        .prepare(`UPDATE staged_members SET ${COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE seq = ?`)
        .run([...toRow(member), seq]),
    );
  }

  members(): StagedMembers {
    return new StagedMembers(this.ready(), this.count());
  }
}

/** The settled members of a stage: read in staging order a window at a time, or by source id. */
export class StagedMembers implements DesiredMembers {
  private readonly byId: Database.Statement;
  private readonly next: Database.Statement;
  private readonly nextById: Database.Statement;

  constructor(
    readonly db: Database.Database,
    readonly length: number,
  ) {
    this.byId = db.prepare(`SELECT ${SELECT} FROM staged_members WHERE source_id = ? ORDER BY seq LIMIT 1`).raw();
    this.next = db.prepare(`SELECT ${SELECT} FROM staged_members WHERE seq > ? ORDER BY seq LIMIT ?`).raw();
    this.nextById = db.prepare(`SELECT ${SELECT} FROM staged_members WHERE source_id > ? ORDER BY source_id LIMIT ?`).raw();
  }

  tally(outcomes: Iterable<readonly [string, string, number]>): MemberTally[] {
    return guarded(() => this.tallyOutcomes(outcomes));
  }

  private tallyOutcomes(outcomes: Iterable<readonly [string, string, number]>): MemberTally[] {
    const db = this.db;
    db.exec('CREATE TEMP TABLE IF NOT EXISTS tally_outcomes (source_id TEXT PRIMARY KEY, outcome TEXT NOT NULL, rank INTEGER NOT NULL) WITHOUT ROWID; DELETE FROM tally_outcomes;');
    const put = db.prepare('INSERT INTO tally_outcomes (source_id, outcome, rank) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET outcome = excluded.outcome, rank = excluded.rank WHERE excluded.rank > rank');
    const write = db.transaction((rows: (readonly [string, string, number])[]) => {
      for (const r of rows) put.run(r[0], r[1], r[2]);
    });
    // Written in batches as they come: a million creates are not held to be counted.
    let batch: (readonly [string, string, number])[] = [];
    for (const o of outcomes) {
      batch.push(o);
      if (batch.length >= STAGE_WINDOW) {
        write(batch);
        batch = [];
      }
    }
    write(batch);
    return db
      .prepare(
        `SELECT s.source AS source, coalesce(o.outcome, CASE WHEN coalesce(s.status, 'active') = 'left' THEN 'left' ELSE 'present' END) AS outcome, count(*) AS count, min(s.seq) AS first
         FROM staged_members s LEFT JOIN tally_outcomes o ON o.source_id = s.source_id GROUP BY 1, 2 ORDER BY first`,
      )
      .all()
      .map((r) => ({ source: (r as MemberTally).source, outcome: (r as MemberTally).outcome, count: (r as MemberTally).count }));
  }

  /** The members in source id order, a window at a time. */
  *bySourceId(): Generator<DesiredMember> {
    const windows = keysetPages((after: string, limit) => guarded(() => this.nextById.all(after, limit) as Row[]), (r) => r[2], '', STAGE_WINDOW);
    for (const rows of windows) for (const r of rows) yield desired(r);
  }

  get(sourceId: string): DesiredMember | undefined {
    const r = guarded(() => this.byId.get(sourceId) as Row | undefined);
    return r === undefined ? undefined : desired(r);
  }

  /** The members in staging order, a window at a time. */
  *windows(size = STAGE_WINDOW): Generator<DesiredMember[]> {
    for (const rows of seqWindows(this.next, size)) yield rows.map(desired);
  }

  *[Symbol.iterator](): Generator<DesiredMember> {
    for (const window of this.windows()) yield* window;
  }
}
