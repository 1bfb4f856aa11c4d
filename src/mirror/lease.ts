import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { steadyWallClock, systemClock } from '../shared/clock.js';
import { OrgsyncError } from '../shared/errors.js';
import { isFullError } from './db-faults.js';
import type { Migration } from './migrations/types.js';

/** Migration 020: the lease lock that keeps two orgsync processes off one state DB. */
export const migration020: Migration = {
  version: 20,
  name: 'lease-lock',
  sql: `
CREATE TABLE lease (
  name        TEXT PRIMARY KEY,
  holder      TEXT NOT NULL,
  hostname    TEXT NOT NULL,
  pid         INTEGER NOT NULL,
  acquired_at INTEGER NOT NULL,
  renewed_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
) STRICT;
`,
};

/** Migration 022: a generation per taking of the lease, so a writer can tell its own term from a later one. */
export const migration022: Migration = {
  version: 22,
  name: 'lease-generation',
  sql: `ALTER TABLE lease ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;`,
};

interface LeaseRow {
  name: string;
  holder: string;
  hostname: string;
  pid: number;
  acquired_at: number;
  renewed_at: number;
  expires_at: number;
  generation: number;
}

/** How this process lost the lease: who holds it now and since when. */
export interface LeaseLoss {
  /** The holder now (`host:pid:id`), or a phrase when no one holds it. */
  holder: string;
  /** When it was lost (the other holder took it, or it expired), ms since the epoch. */
  at: number;
}

/** Who holds the lease, as told to a process that is refused. */
export interface LeaseHolder {
  holder: string;
  hostname: string;
  pid: number;
  acquiredAt: number;
  expiresAt: number;
}

/** Options of a lease. */
export interface LeaseOptions {
  /** Lease name; one per state DB by default. */
  name?: string;
  /** How long a lease lives without renewal (a crashed holder on another host is taken over after this): state.lease_ttl. */
  ttlMs: number;
  now?: () => number;
  /** For messages: the state DB's path. */
  dbPath?: string;
  /** Identity of this process (tests run two "processes" in one). */
  identity?: { hostname: string; pid: number };
  /** Whether a process on this host is alive (tests inject it). */
  isAlive?: (pid: number) => boolean;
}

/** True when a process with this pid exists on this host. */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A lease lock row in the state DB. Taken in an IMMEDIATE transaction, renewed on a heartbeat, released on exit.
 * A lease whose holder ran on this host and is dead (kill -9) is taken over at once; one from another host
 * only once it expires, since its process cannot be checked from here.
 */
export class MirrorLease {
  readonly name: string;
  readonly holder: string;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly identity: { hostname: string; pid: number };
  private readonly isAlive: (pid: number) => boolean;
  private timer: NodeJS.Timeout | undefined;
  private held = false;
  /** The generation this process took; a later taking (by anyone) has a higher one. */
  private generation = -1;
  private verifyStmt: Database.Statement | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly options: LeaseOptions,
  ) {
    this.name = options.name ?? 'mirror';
    this.ttlMs = options.ttlMs;
    // Lease time does not jump with the wall clock (see steadyWallClock): a step back or forward neither
    // shortens nor extends a term beyond its TTL.
    this.now = options.now ?? steadyWallClock(systemClock);
    this.identity = options.identity ?? { hostname: hostname(), pid: process.pid };
    this.isAlive = options.isAlive ?? processIsAlive;
    this.holder = `${this.identity.hostname}:${this.identity.pid}:${randomUUID().slice(0, 8)}`;
  }

  /** Whether this process holds the lease (as of the last take, renewal or verification). */
  get isHeld(): boolean {
    return this.held;
  }

  /** How often the heartbeat renews the lease: a third of the TTL (at least 1 s). */
  get renewEveryMs(): number {
    return Math.max(1_000, Math.floor(this.ttlMs / 3));
  }

  /**
   * Fencing: undefined while this process still holds its term of the lease (same holder and generation, not
   * expired by this clock); otherwise who holds it now. Writers call it before every write (one indexed read).
   */
  verify(): LeaseLoss | undefined {
    if (this.generation < 0) return { holder: 'no one (this process never took it)', at: this.now() };
    this.verifyStmt ??= this.db.prepare('SELECT holder, generation, acquired_at, expires_at FROM lease WHERE name = ?');
    const now = this.now();
    const row = this.verifyStmt.get(this.name) as Pick<LeaseRow, 'holder' | 'generation' | 'acquired_at' | 'expires_at'> | undefined;
    if (row && row.holder === this.holder && row.generation === this.generation && row.expires_at > now) return undefined;
    this.held = false;
    if (!row) return { holder: 'no one (it was released)', at: now };
    if (row.holder !== this.holder || row.generation !== this.generation) return { holder: row.holder, at: row.acquired_at };
    return { holder: 'no one (it expired)', at: row.expires_at };
  }

  /** The current holder, if any (expired or not). */
  current(): LeaseHolder | undefined {
    const row = this.db.prepare('SELECT * FROM lease WHERE name = ?').get(this.name) as LeaseRow | undefined;
    return row && { holder: row.holder, hostname: row.hostname, pid: row.pid, acquiredAt: row.acquired_at, expiresAt: row.expires_at };
  }

  /** Takes the lease or throws STATE_LOCKED naming the holder. */
  acquire(): void {
    const take = this.db.transaction(() => {
      const now = this.now();
      const row = this.db.prepare('SELECT * FROM lease WHERE name = ?').get(this.name) as LeaseRow | undefined;
      const free =
        !row ||
        row.holder === this.holder ||
        row.expires_at <= now ||
        (row.hostname === this.identity.hostname && row.pid !== this.identity.pid && !this.isAlive(row.pid));
      if (!free) {
        throw new OrgsyncError(
          'STATE_LOCKED',
          `state DB ${this.options.dbPath ?? ''}${this.options.dbPath ? ' ' : ''}is in use by another orgsync process (pid ${row.pid} on ${row.hostname}, since ${new Date(row.acquired_at).toISOString()}); only one process may sync a mirror at a time`,
          { details: { holder: row.holder } },
        );
      }
      const generation = (row?.generation ?? 0) + 1;
      this.db
        .prepare(
          `INSERT INTO lease (name, holder, hostname, pid, acquired_at, renewed_at, expires_at, generation) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, hostname = excluded.hostname, pid = excluded.pid,
             acquired_at = excluded.acquired_at, renewed_at = excluded.renewed_at, expires_at = excluded.expires_at,
             generation = excluded.generation`,
        )
        .run(this.name, this.holder, this.identity.hostname, this.identity.pid, now, now, now + this.ttlMs, generation);
      return generation;
    });
    this.generation = take.immediate();
    this.held = true;
  }

  /**
   * Extends this process's term; false when it was lost: another process took it, or it expired first (a frozen
   * process that wakes past its TTL does not get its term back, even when no one else took it).
   */
  renew(): boolean {
    const now = this.now();
    const changed = this.db
      .prepare('UPDATE lease SET renewed_at = ?, expires_at = ? WHERE name = ? AND holder = ? AND generation = ? AND expires_at > ?')
      .run(now, now + this.ttlMs, this.name, this.holder, this.generation, now).changes;
    this.held = changed === 1;
    return this.held;
  }

  /** Renews every third of the TTL until released; `onLost` is told if the lease slips away. */
  startHeartbeat(onLost?: () => void): void {
    this.stopHeartbeat();
    this.timer = setInterval(() => {
      try {
        if (!this.renew()) {
          // Lost for good: beating on would only repeat the news; the next run takes the lease again or is refused.
          this.stopHeartbeat();
          onLost?.();
        }
      } catch {
        // A busy DB: the next beat retries well before the lease expires.
      }
    }, this.renewEveryMs);
    this.timer.unref();
  }

  private stopHeartbeat(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Gives the lease up (only if this process holds it). On a full disk the row cannot be deleted, and need not be: a
   * later process on this host takes the lease of a dead holder, any other once it expires. The run's own stop
   * (STATE_FULL) is what the operator reads, not this.
   */
  release(): void {
    this.stopHeartbeat();
    if (!this.db.open) return;
    try {
      this.db.prepare('DELETE FROM lease WHERE name = ? AND holder = ? AND generation = ?').run(this.name, this.holder, this.generation);
    } catch (err) {
      if (!isFullError(err)) throw err;
    }
    this.held = false;
  }
}
