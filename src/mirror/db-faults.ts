/**
 * SQLite faults of the state DB told the way an operator can act on them: which file, what holds it, what to do.
 * `database is locked` (another process kept the write lock past the busy timeout), `database or disk is full` and
 * `database disk image is malformed` / `file is not a database` (a damaged file) become OrgsyncErrors that name the
 * path and the way out.
 */
import { readdirSync, readFileSync, readlinkSync, statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { OrgsyncError } from '../shared/errors.js';

/** SQLite's code of an error (better-sqlite3's SqliteError carries it), or ''. */
function sqliteCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : '';
}

/** True when `err` is SQLite saying the file is locked by another connection. */
export function isLockedError(err: unknown): boolean {
  const code = sqliteCode(err);
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}

/** True when `err` is SQLite saying the disk (or the database's size limit) is full. */
export function isFullError(err: unknown): boolean {
  const code = sqliteCode(err);
  return code === 'SQLITE_FULL' || (err as { code?: unknown } | null)?.code === 'ENOSPC';
}

/** The free space of the filesystem holding `path` (its folder), in MB, or undefined where it cannot be read. */
export function freeMegabytes(path: string): number | undefined {
  try {
    const s = statfsSync(dirname(resolve(path)));
    return Math.floor((s.bavail * s.bsize) / 1048576);
  } catch {
    return undefined;
  }
}

/** True when `err` is SQLite saying the file is damaged or not a database. */
export function isDamagedError(err: unknown): boolean {
  const code = sqliteCode(err);
  return code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB';
}

/**
 * Other processes of this host with the state DB (or its -wal/-shm files) open, as `pid N (command line)`, from
 * /proc; empty where /proc is not readable (another OS, another container: then nothing can be said).
 */
export function processesHolding(path: string): string[] {
  const files = new Set([path, `${path}-wal`, `${path}-shm`].map((p) => resolve(p)));
  const out: string[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid);
  } catch {
    return out;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    const holds = fds.some((fd) => {
      try {
        return files.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false;
      }
    });
    if (!holds) continue;
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').replace(/\s+/g, ' ').trim();
    } catch {
      // gone meanwhile
    }
    out.push(`pid ${pid}${cmd ? ` (${cmd.length > 120 ? `${cmd.slice(0, 117)}...` : cmd})` : ''}`);
  }
  return out;
}

/** The way out of a damaged state DB (the same words wherever it is reported). */
export function restoreAdvice(path: string): string {
  return `restore a backup with \`orgsync state restore --config <config> <backup file>\`, or move ${path} away (the next run rebuilds the mirror from a full walk, but the ownership records and run history are lost)`;
}

/**
 * The OrgsyncError for a locked or damaged state DB at `path`, or undefined for any other error.
 * `doing` says what could not be done (`could not record a write`); `busyTimeoutMs` is the connection's timeout.
 */
export function stateDbFault(err: unknown, path: string, opts: { doing?: string; busyTimeoutMs?: number } = {}): OrgsyncError | undefined {
  const doing = opts.doing ? `${opts.doing}: ` : '';
  if (isLockedError(err)) {
    const holders = processesHolding(path);
    const who = holders.length > 0 ? `held by ${holders.join(', ')}` : 'held by another process (none of this host\'s processes has it open: another host or container?)';
    const waited = opts.busyTimeoutMs !== undefined ? ` for longer than state.busy_timeout (${opts.busyTimeoutMs / 1000}s)` : '';
    return new OrgsyncError(
      'STATE_LOCKED',
      `${doing}state DB ${path} is locked, ${who}${waited}; stop that process or raise state.busy_timeout (a damaged file is put back with \`orgsync state restore\`)`,
      { cause: err, details: { holders } },
    );
  }
  if (isFullError(err)) {
    const free = freeMegabytes(path);
    return new OrgsyncError(
      'STATE_FULL',
      `${doing}state DB ${path}: the disk is full${free !== undefined ? ` (${free} MB free)` : ''}; free space there or grow the volume (the Helm chart's persistence.size; docs/operations.md sizes it per tenant); nothing written is lost: the next run resumes from the state DB as it was committed`,
      { cause: err, details: free !== undefined ? { free_mb: free } : {} },
    );
  }
  if (isDamagedError(err)) {
    const what = (err as Error).message;
    return new OrgsyncError('STATE_ERROR', `${doing}state DB ${path} is damaged (${what}); ${restoreAdvice(path)}`, { cause: err });
  }
  return undefined;
}

/** `err` as a stateDbFault when it is one, else `err` itself. */
export function explainStateDbError(err: unknown, path: string, opts: { doing?: string; busyTimeoutMs?: number } = {}): unknown {
  return stateDbFault(err, path, opts) ?? err;
}
