/**
 * A private, in-memory snapshot of the state DB for the read-only commands (`plan` without `--out`, `explain`,
 * `mirror status`; issue 15). They take no lease and never write the state DB, so they run beside a daemon or a sync
 * that holds it: the file is read once inside one read transaction (a WAL reader, which never blocks the writer),
 * copied into memory, and everything they do afterwards (a mirror refresh, the plan's bookkeeping) changes that
 * copy only, which is dropped when they end.
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import Database from 'better-sqlite3';
import { OrgsyncError } from '../shared/errors.js';
import { openStateDb } from './db.js';
import { processIsAlive, type LeaseHolder } from './lease.js';
import { migrations, runMigrations } from './migrations/index.js';

/** A snapshot and who held the state DB's lease when it was taken. */
export interface StateSnapshot {
  /** The in-memory copy, at the current schema version. */
  db: Database.Database;
  /** Another process that held the lease when the snapshot was taken (undefined: none, or an expired or dead one). */
  holder: LeaseHolder | undefined;
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
 * Reads the state DB at `path` into memory. A missing file gives an empty state DB (nothing is created on disk).
 * STATE_ERROR names the file when it cannot be read.
 */
export function openStateSnapshot(path: string, options: SnapshotOptions): StateSnapshot {
  if (!existsSync(path)) return { db: openStateDb(':memory:', { busyTimeoutMs: options.busyTimeoutMs }), holder: undefined };
  let image: Buffer;
  try {
    const reader = new Database(path, { readonly: true, fileMustExist: true });
    try {
      reader.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
      image = reader.serialize();
    } finally {
      reader.close();
    }
  } catch (err) {
    throw new OrgsyncError('STATE_ERROR', `cannot read state DB ${path}: ${(err as Error).message}`, { cause: err });
  }
  const db = new Database(inMemoryImage(image));
  try {
    db.pragma('foreign_keys = ON');
    // A file an older orgsync wrote is brought up to date in memory only.
    runMigrations(db, migrations, path);
    return { db, holder: liveHolder(db, options) };
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * A database image ready for an in-memory connection: bytes 18-19 of the header say WAL (2) for a state DB, and an
 * in-memory database cannot use WAL, so they are set to the rollback journal (1); the pages are unchanged.
 */
export function inMemoryImage(image: Buffer): Buffer {
  if (image.length >= 20 && (image[18] === 2 || image[19] === 2)) {
    image[18] = 1;
    image[19] = 1;
  }
  return image;
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
