/**
 * A private snapshot of the state DB for the read-only commands (`plan` without `--out`, `explain`, `history`,
 * `mirror status`; issue 15). They take no lease and never write the state DB, so they run beside a daemon or a sync
 * that holds it: the file is copied once inside one read transaction (a WAL reader, which never blocks the writer)
 * into a private folder under TMPDIR (mode 0700, the copy 0600), and everything they do afterwards (a mirror
 * refresh, the plan's bookkeeping) changes that copy only, which is removed when they end. Issue 42: the copy is a
 * file, not an image in the heap (a million-member state DB held 1.3 GB of a plan's memory); SQLite reads it a page
 * at a time.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { OrgsyncError } from '../shared/errors.js';
import { createPrivateFile } from '../shared/private-file.js';
import { openStateDb, STATE_DB_CACHE_KIB } from './db.js';
import { processIsAlive, type LeaseHolder } from './lease.js';
import { migrations, runMigrations } from './migrations/index.js';

/** A snapshot and who held the state DB's lease when it was taken. */
export interface StateSnapshot {
  /** The private copy, at the current schema version. */
  db: Database.Database;
  /** Another process that held the lease when the snapshot was taken (undefined: none, or an expired or dead one). */
  holder: LeaseHolder | undefined;
  /** Closes the copy and removes it (also done at exit, should the command end another way). */
  close(): void;
}

/** How to judge whether the lease row names a live holder (tests inject these). */
export interface SnapshotOptions {
  now?: () => number;
  isAlive?: (pid: number) => boolean;
  hostname?: string;
  /** How long to wait for a writer's lock while reading, in ms (state.busy_timeout: the schema has its default). */
  busyTimeoutMs: number;
}

interface LeaseRow {
  holder: string;
  hostname: string;
  pid: number;
  acquired_at: number;
  expires_at: number;
}

/**
 * Copies the state DB at `path` into a private folder and opens the copy. A missing file gives an empty state DB
 * in memory (nothing is created on disk). STATE_ERROR names the file when it cannot be read or copied.
 */
export function openStateSnapshot(path: string, options: SnapshotOptions): StateSnapshot {
  if (!existsSync(path)) {
    const db = openStateDb(':memory:', { busyTimeoutMs: options.busyTimeoutMs });
    return { db, holder: undefined, close: () => db.close() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'orgsync-snapshot-'));
  // Removed at exit should the caller never close it; closing removes the listener too, or a daemon that reads a
  // snapshot per request would add one per read (Node warns at 11).
  const removeAtExit = (): void => rmSync(dir, { recursive: true, force: true });
  const remove = (): void => {
    process.removeListener('exit', removeAtExit);
    removeAtExit();
  };
  process.once('exit', removeAtExit);
  const copy = join(dir, 'state.db');
  try {
    copyStateDb(path, copy, options.busyTimeoutMs);
    const db = new Database(copy);
    try {
      db.pragma(`cache_size = -${STATE_DB_CACHE_KIB}`);
      db.pragma('foreign_keys = ON');
      // A file an older orgsync wrote is brought up to date in the copy only.
      runMigrations(db, migrations, path);
      return { db, holder: liveHolder(db, options), close: () => (db.close(), remove()) };
    } catch (err) {
      db.close();
      throw err;
    }
  } catch (err) {
    remove();
    throw err;
  }
}

/** The state DB at `path` as it is in one read transaction, written to `copy` (created private first). */
function copyStateDb(path: string, copy: string, busyTimeoutMs: number): void {
  try {
    const reader = new Database(path, { readonly: true, fileMustExist: true });
    try {
      reader.pragma(`busy_timeout = ${busyTimeoutMs}`);
      reader.pragma(`cache_size = -${STATE_DB_CACHE_KIB}`);
      createPrivateFile(copy);
      reader.prepare('VACUUM INTO ?').run(copy);
    } finally {
      reader.close();
    }
  } catch (err) {
    throw new OrgsyncError('STATE_ERROR', `cannot copy state DB ${path} for a read-only command into ${copy} (TMPDIR needs room for it): ${(err as Error).message}`, { cause: err });
  }
}

function liveHolder(db: Database.Database, options: SnapshotOptions): LeaseHolder | undefined {
  const row = db.prepare("SELECT holder, hostname, pid, acquired_at, expires_at FROM lease WHERE name = 'mirror'").get() as LeaseRow | undefined;
  if (!row) return undefined;
  const now = (options.now ?? Date.now)();
  if (row.expires_at <= now) return undefined;
  if (row.hostname === (options.hostname ?? hostname()) && !(options.isAlive ?? processIsAlive)(row.pid)) return undefined;
  return { holder: row.holder, hostname: row.hostname, pid: row.pid, acquiredAt: row.acquired_at, expiresAt: row.expires_at };
}

/** The one line a read-only command prints when another process held the lease. */
export function withoutLeaseNote(command: string, path: string, holder: LeaseHolder): string {
  return `orgsync: ${command} ran without the lease (state DB ${path} is held by pid ${holder.pid} on ${holder.hostname} since ${new Date(holder.acquiredAt).toISOString()}): it read a snapshot of the state DB and wrote nothing to it\n`;
}
