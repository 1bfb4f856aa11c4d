/**
 * `orgsync state backup` and `orgsync state restore` (issue 15): the state DB holds member ownership, grace counters
 * and source baselines, none of which the platform can give back, so it must survive the loss of its volume.
 * - backup: SQLite's online backup API copies the DB inside one read transaction (a consistent snapshot while a
 *   daemon keeps writing, WAL readers never block it) into a temp file, which is renamed onto FILE when complete.
 * - restore: the file is checked first (SQLite, intact, an orgsync state DB of a schema version this orgsync knows,
 *   of this sync.id), brought to the current schema in memory, then copied into the live DB with the backup API,
 *   which writes the destination in one transaction: a crash leaves the old DB or the new one, never half of each.
 *   The live DB's lease is taken first, so a restore is refused while another process holds it.
 */
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import { OrgsyncError } from '../shared/errors.js';
import { createPrivateFile } from '../shared/private-file.js';
import { openStateDb } from './db.js';
import { MirrorLease, type LeaseOptions } from './lease.js';
import { migrations as allMigrations, runMigrations, type Migration } from './migrations/index.js';

/** Pages copied per backup step: all of them, so the copy is taken inside one read transaction of the source. */
const ALL_PAGES = 0x7fffffff;

/** What a state DB file holds, as `state backup` and `state restore` report it. */
export interface StateFileFacts {
  /** PRAGMA user_version: the last migration applied. */
  schemaVersion: number;
  /** sync ids with ownership, baselines or fingerprints in the file. */
  syncIds: string[];
  ownedMembers: number;
  runs: number;
  bytes: number;
}

/**
 * The tables a state DB has after `list`'s migrations, from their SQL in order (how a file is recognised as an orgsync
 * state DB): created, less those dropped, renamed ones under their new names (issue 42 rebuilds the mirror tables).
 */
function tablesAfter(list: readonly Migration[]): string[] {
  const tables = new Set<string>();
  const steps = /CREATE TABLE (?:IF NOT EXISTS )?(\w+)|DROP TABLE (?:IF EXISTS )?(\w+)|ALTER TABLE (\w+) RENAME TO (\w+)/gi;
  for (const m of [...list].sort((a, b) => a.version - b.version)) {
    for (const [, created, dropped, from, to] of m.sql.matchAll(steps)) {
      if (created) tables.add(created);
      if (dropped) tables.delete(dropped);
      if (from && to) {
        tables.delete(from);
        tables.add(to);
      }
    }
  }
  return [...tables];
}

function count(db: Database.Database, table: string, tables: Set<string>): number {
  return tables.has(table) ? (db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number) : 0;
}

/**
 * Checks that `db` (opened on `file`) is an intact orgsync state DB this orgsync can use and says what it holds.
 * Throws BACKUP_INVALID naming the file and what is wrong.
 */
export function inspectStateDb(db: Database.Database, file: string, list: readonly Migration[] = allMigrations): StateFileFacts {
  const bad = (why: string, cause?: unknown): OrgsyncError => new OrgsyncError('BACKUP_INVALID', `${file} is not a usable orgsync state DB: ${why}`, cause === undefined ? undefined : { cause });
  let version: number;
  let tables: Set<string>;
  try {
    const check = db.pragma('quick_check', { simple: true }) as string;
    if (check !== 'ok') throw bad(`SQLite reports it damaged (quick_check: ${check})`);
    version = db.pragma('user_version', { simple: true }) as number;
    tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]);
  } catch (err) {
    if (err instanceof OrgsyncError) throw err;
    throw bad((err as Error).message, err);
  }
  let latest = 0;
  for (const m of list) latest = Math.max(latest, m.version);
  if (version === 0) throw bad('it has no orgsync schema version (PRAGMA user_version is 0)');
  if (version > latest) throw bad(`its schema version ${version} is newer than this orgsync knows (${latest}); restore it with a newer orgsync`);
  const missing = tablesAfter(list.filter((m) => m.version <= version)).filter((t) => !tables.has(t));
  if (missing.length > 0) throw bad(`schema version ${version} but table${missing.length === 1 ? '' : 's'} ${missing.join(', ')} missing`);
  const syncIds = new Set<string>();
  for (const t of ['owned_members', 'source_snapshots', 'scope_fingerprints']) {
    if (tables.has(t)) for (const id of db.prepare(`SELECT DISTINCT sync_id FROM ${t}`).pluck().all() as string[]) syncIds.add(id);
  }
  return {
    schemaVersion: version,
    syncIds: [...syncIds].sort(),
    ownedMembers: count(db, 'owned_members', tables),
    runs: count(db, 'runs', tables),
    bytes: existsSync(file) ? statSync(file).size : 0,
  };
}

/** Opens a file read-only for inspection; BACKUP_INVALID when it is missing or not SQLite. */
function openForReading(file: string): Database.Database {
  if (!existsSync(file)) throw new OrgsyncError('BACKUP_INVALID', `${file}: no such file`);
  try {
    return new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new OrgsyncError('BACKUP_INVALID', `${file} is not a usable orgsync state DB: ${(err as Error).message}`, { cause: err });
  }
}

/** The result of a backup. */
export interface BackupResult extends StateFileFacts {
  file: string;
}

/**
 * Copies `source` into `file` with the online backup API: into a temp file beside it first (all pages in one step,
 * so inside one read transaction of the source), then without lease rows and as one self-contained file (no -wal),
 * then renamed onto `file`. `file` is never left half-written.
 */
async function writeCopy(source: Database.Database, file: string, what: string): Promise<StateFileFacts> {
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    try {
      // Owner-only from the first byte (issue 29): SQLite writes into the empty private file, the rename keeps its mode.
      createPrivateFile(tmp);
      await source.backup(tmp, { progress: () => ALL_PAGES });
    } catch (err) {
      throw new OrgsyncError('STATE_ERROR', `${what}: cannot write ${file}: ${(err as Error).message}`, { cause: err });
    }
    const copy = new Database(tmp);
    let facts: StateFileFacts;
    try {
      if (copy.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'lease'").get()) copy.prepare('DELETE FROM lease').run();
      copy.pragma('journal_mode = DELETE');
      facts = inspectStateDb(copy, file);
    } finally {
      copy.close();
    }
    renameSync(tmp, file);
    return { ...facts, bytes: statSync(file).size };
  } finally {
    for (const f of [tmp, `${tmp}-journal`, `${tmp}-wal`, `${tmp}-shm`]) rmSync(f, { force: true });
  }
}

/**
 * Writes a consistent copy of the state DB at `dbPath` to `file` while other processes may hold and write it.
 * The copy is self-contained (no -wal file) and carries no lease. `file` is replaced only once the copy is complete.
 * `busyTimeoutMs`: how long reading waits for a writer's lock (state.busy_timeout).
 */
export async function backupStateDb(dbPath: string, file: string, options: { busyTimeoutMs: number }): Promise<BackupResult> {
  if (resolve(file) === resolve(dbPath)) throw new OrgsyncError('USAGE', `state backup: ${file} is the state DB itself; name another file`);
  if (!existsSync(dbPath)) throw new OrgsyncError('STATE_ERROR', `no state DB at ${dbPath} (state.path) to back up`);
  const source = openStateDb(dbPath, { readonly: true, busyTimeoutMs: options.busyTimeoutMs });
  try {
    return { ...(await writeCopy(source, file, 'state backup')), file };
  } finally {
    source.close();
  }
}

/** Options of restoreStateDb. */
export interface RestoreOptions {
  /** The config's sync.id: a backup holding only other sync ids' state is refused. */
  syncId: string;
  /** How long the live state DB's statements wait for another process's lock, in ms (state.busy_timeout). */
  busyTimeoutMs: number;
  /** How long the lease the restore takes lives without renewal, in ms (state.lease_ttl). */
  leaseTtlMs: number;
  /** Lease options (identity, clock) of this process. */
  lease?: Omit<LeaseOptions, 'dbPath' | 'ttlMs'>;
  /** Where to save the state being replaced (default `<dbPath>.before-restore`); null: not saved. */
  keepPrevious?: string | null;
}

/** The result of a restore. */
export interface RestoreResult extends StateFileFacts {
  /** Where the replaced state DB was saved, if there was one. */
  previous: string | undefined;
}

/**
 * A database image ready for an in-memory connection: bytes 18-19 of the header say WAL (2) for a state DB, and an
 * in-memory database cannot use WAL, so they are set to the rollback journal (1); the pages are unchanged.
 */
function inMemoryImage(image: Buffer): Buffer {
  if (image.length >= 20 && (image[18] === 2 || image[19] === 2)) {
    image[18] = 1;
    image[19] = 1;
  }
  return image;
}

/**
 * Puts the backup `file` in place of the state DB at `dbPath`. Refused (STATE_LOCKED, naming the holder) while
 * another process holds the lease; refused (BACKUP_INVALID) when the file is not a usable orgsync state DB of this
 * sync. The live DB is replaced in one SQLite transaction.
 */
export async function restoreStateDb(dbPath: string, file: string, options: RestoreOptions): Promise<RestoreResult> {
  if (resolve(file) === resolve(dbPath)) throw new OrgsyncError('USAGE', `state restore: ${file} is the state DB itself; name a backup file`);
  const reader = openForReading(file);
  let prepared: Database.Database;
  let facts: StateFileFacts;
  try {
    facts = inspectStateDb(reader, file);
    if (facts.syncIds.length > 0 && !facts.syncIds.includes(options.syncId)) {
      throw new OrgsyncError(
        'BACKUP_INVALID',
        `${file} holds the state of sync id ${facts.syncIds.map((s) => `"${s}"`).join(', ')}, not of "${options.syncId}" (sync.id of this config); restore a backup of this sync`,
      );
    }
    // A private in-memory copy, brought to this version's schema; the backup file itself is never written.
    prepared = new Database(inMemoryImage(reader.serialize()));
  } finally {
    reader.close();
  }
  try {
    runMigrations(prepared, allMigrations, file);
    prepared.prepare('DELETE FROM lease').run();

    const live = openStateDb(dbPath, { busyTimeoutMs: options.busyTimeoutMs });
    const lease = new MirrorLease(live, { ...options.lease, dbPath, ttlMs: options.leaseTtlMs });
    try {
      try {
        lease.acquire();
      } catch (err) {
        if (err instanceof OrgsyncError && err.code === 'STATE_LOCKED') {
          throw new OrgsyncError('STATE_LOCKED', `state restore refused: ${err.message}; stop that process first (scale the Deployment to 0 or wait for the CronJob run to end), then restore`, { cause: err, ...(err.details ? { details: err.details } : {}) });
        }
        throw err;
      }
      let previous: string | undefined;
      const keep = options.keepPrevious === undefined ? `${dbPath}.before-restore` : options.keepPrevious;
      const liveRuns = live.prepare('SELECT count(*) FROM runs').pluck().get() as number;
      const liveOwned = live.prepare('SELECT count(*) FROM owned_members').pluck().get() as number;
      if (keep !== null && liveRuns + liveOwned > 0) {
        await writeCopy(live, keep, 'state restore');
        previous = keep;
      }
      try {
        await prepared.backup(dbPath, { progress: () => ALL_PAGES });
      } catch (err) {
        throw new OrgsyncError('STATE_ERROR', `state restore: copying ${file} into ${dbPath} failed, the state DB is unchanged: ${(err as Error).message}`, { cause: err });
      }
      // Read back through the live connection: what the next process will see.
      const after = inspectStateDb(live, dbPath);
      return { ...facts, schemaVersion: after.schemaVersion, ownedMembers: after.ownedMembers, runs: after.runs, previous };
    } finally {
      lease.release();
      live.close();
    }
  } finally {
    prepared.close();
  }
}
