/**
 * The state DB connection: one SQLite file shared by the mirror, ownership and run history. src/mirror owns the
 * connection settings and the migration runner; the other repositories take the opened Database.
 */
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { OrgsyncError } from '../shared/errors.js';
import { createPrivateFile, ensurePrivateDir, looseModeWarning } from '../shared/private-file.js';
import type { Logger } from '../shared/logger.js';
import { isFullError, stateDbFault } from './db-faults.js';
import { migrations as allMigrations, runMigrations, type Migration } from './migrations/index.js';

/** Options of openStateDb. */
export interface OpenStateDbOptions {
  /** Migrations to apply (default: all of ./migrations/index.ts). */
  migrations?: readonly Migration[];
  /** How long a statement waits for another process's lock, in ms (state.busy_timeout: the schema has its default). */
  busyTimeoutMs: number;
  readonly?: boolean;
}

/** Why the state DB could not be opened, in words (SQLite says only "unable to open database file"). */
function stateOpenCause(err: unknown, path: string, readonly: boolean): string {
  const code = (err as NodeJS.ErrnoException).code;
  const folder = dirname(path);
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return `the folder ${folder} is not writable (${code})`;
  if (code === 'ENOTDIR' || code === 'EEXIST') return `${folder} is not a folder (${code})`;
  if (code === 'SQLITE_CANTOPEN' && readonly) return 'the file does not exist or cannot be read';
  if (code === 'SQLITE_CANTOPEN') return `the file cannot be opened or created in ${folder} (not writable, or not a folder)`;
  return (err as Error).message;
}

/**
 * The page cache of a state DB connection, in KiB (SQLite's own default, 2 MB). better-sqlite3 builds SQLite with
 * 16 MB, which an initial sync of 100,000 members filled: 16 MB of its peak RSS for no gain, since every write is
 * committed (and fsynced) at once and the pages it reads again are in the OS page cache (issue 31).
 */
export const STATE_DB_CACHE_KIB = 2000;

/**
 * Opens (creating when needed) the state DB at `path` (`:memory:` in unit tests) and brings it to the latest version.
 * WAL lets readers (mirror status) run beside the daemon; synchronous=FULL because better-sqlite3 builds default to
 * NORMAL under WAL, where the last commits may roll back after a power loss, and ownership records must not.
 */
export function openStateDb(path: string, options: OpenStateDbOptions): Database.Database {
  let db: Database.Database;
  try {
    if (path !== ':memory:' && !options.readonly) {
      // Owner-only whatever the umask (issue 29): SQLite gives the -wal and -shm files the mode of the DB file.
      ensurePrivateDir(dirname(path));
      createPrivateFile(path);
    }
    db = new Database(path, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
  } catch (err) {
    throw new OrgsyncError('STATE_ERROR', `cannot open state DB ${path}: ${stateOpenCause(err, path, options.readonly ?? false)}; set state.path to a file in a folder this process can write`, { cause: err });
  }
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
    db.pragma(`cache_size = -${STATE_DB_CACHE_KIB}`);
    if (!options.readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = ON');
      runMigrations(db, options.migrations ?? allMigrations, path);
    }
  } catch (err) {
    db.close();
    // A migration that failed for a full disk is told as the full disk (the migration's own error wraps it).
    const fullMigration = err instanceof OrgsyncError && isFullError(err.cause);
    if (err instanceof OrgsyncError && !fullMigration) throw err;
    const fault = stateDbFault(fullMigration ? (err as OrgsyncError).cause : err, path, { doing: 'cannot open the state DB', busyTimeoutMs: options.busyTimeoutMs });
    if (fault) throw fault;
    throw new OrgsyncError('STATE_ERROR', `${path}: cannot prepare state DB: ${(err as Error).message}`, { cause: err });
  }
  return db;
}

/**
 * Warns (issue 29) when the state DB at `path` is readable by its group or other users, naming the file and the
 * `chmod` to run: it holds every employee's record. Files orgsync creates are private; an older or copied one may not be.
 */
export function warnIfStateDbReadable(path: string, logger: Logger): void {
  if (path === ':memory:') return;
  const warning = looseModeWarning(path, 'the state DB');
  if (warning) logger.warn({ state_db: path }, warning);
}
