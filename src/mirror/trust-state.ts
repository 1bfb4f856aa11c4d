/**
 * Trust state of the reconcile (issue 10) in the state DB: the last good source snapshot counts per entity (shrink
 * guard), the records missing from the sources with when they were first missed and for how many consecutive runs
 * (grace period), the config scope fingerprint (scope guard), when departments and positions were first seen owned
 * (the platform does not date them; for `orgsync explain`) and the key that signs saved plan files.
 */
import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { EntityKind } from '../domain/entities.js';
import type { Migration } from './migrations/types.js';

const TRUST_SQL = `
CREATE TABLE IF NOT EXISTS source_snapshots (
  sync_id TEXT NOT NULL,
  entity TEXT NOT NULL CHECK (entity IN ('departments', 'members', 'positions')),
  record_count INTEGER NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (sync_id, entity)
) STRICT;
CREATE TABLE IF NOT EXISTS missing_records (
  sync_id TEXT NOT NULL,
  entity TEXT NOT NULL CHECK (entity IN ('departments', 'members', 'positions')),
  record_key TEXT NOT NULL,
  first_missing_at TEXT NOT NULL,
  missing_runs INTEGER NOT NULL,
  PRIMARY KEY (sync_id, entity, record_key)
) STRICT;
CREATE TABLE IF NOT EXISTS scope_fingerprints (
  sync_id TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  scope TEXT NOT NULL,
  recorded_at TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS owned_records_seen (
  sync_id TEXT NOT NULL,
  entity TEXT NOT NULL CHECK (entity IN ('departments', 'positions')),
  platform_id TEXT NOT NULL,
  first_seen_at TEXT NOT NULL,
  PRIMARY KEY (sync_id, entity, platform_id)
) STRICT;
CREATE TABLE IF NOT EXISTS plan_signing_keys (
  sync_id TEXT PRIMARY KEY,
  key_hex TEXT NOT NULL
) STRICT;
`;

/** 015: trust state (numbers 011-014 stay free for the reconcile). */
export const migration015: Migration = { version: 15, name: 'trust-state', sql: TRUST_SQL };

/** A record missing from the sources, as remembered between runs. */
export interface MissingRecord {
  entity: EntityKind;
  /** The record's third id (or platform id when it has none). */
  key: string;
  firstMissingAt: string;
  /** Consecutive runs (applied syncs) that found it missing, this one not counted. */
  runs: number;
}

/** The scope of the config as last accepted. */
export interface ScopeRecord {
  fingerprint: string;
  /** The scope parts the fingerprint was computed from (JSON), for the message naming what changed. */
  scope: Record<string, string>;
  recordedAt: string;
}

/** Ownership facts of a member for `orgsync explain` (read from the reconcile's owned_members table). */
export interface MemberOwnershipFacts {
  accountId: string;
  origin: string;
  ownedSince: string;
}

/** The trust repository of one sync id. Statements are prepared once. */
export class TrustStateStore {
  private readonly selectSnapshots: Database.Statement;
  private readonly upsertSnapshot: Database.Statement;
  private readonly selectMissing: Database.Statement;
  private readonly clearMissing: Database.Statement;
  private readonly insertMissing: Database.Statement;
  private readonly deleteMissingOne: Database.Statement;
  private readonly selectScope: Database.Statement;
  private readonly upsertScope: Database.Statement;
  private readonly selectKey: Database.Statement;
  private readonly insertKey: Database.Statement;
  private readonly selectOwnedFacts: Database.Statement;
  private readonly insertSeen: Database.Statement;
  private readonly selectSeen: Database.Statement;
  private readonly selectKnown: Database.Statement;
  private readonly commitTx: (c: TrustCommit) => void;

  constructor(
    db: Database.Database,
    readonly syncId: string,
  ) {
    // A state DB that reached a later version (e.g. 021) before migration 015 existed never runs it (the runner
    // applies only versions above user_version); the statements are idempotent, so make sure the tables exist.
    db.exec(TRUST_SQL);
    this.selectSnapshots = db.prepare('SELECT entity, record_count FROM source_snapshots WHERE sync_id = ?');
    this.upsertSnapshot = db.prepare(
      `INSERT INTO source_snapshots (sync_id, entity, record_count, recorded_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (sync_id, entity) DO UPDATE SET record_count = excluded.record_count, recorded_at = excluded.recorded_at`,
    );
    this.selectMissing = db.prepare('SELECT entity, record_key AS key, first_missing_at AS firstMissingAt, missing_runs AS runs FROM missing_records WHERE sync_id = ?');
    this.clearMissing = db.prepare('DELETE FROM missing_records WHERE sync_id = ?');
    this.insertMissing = db.prepare('INSERT INTO missing_records (sync_id, entity, record_key, first_missing_at, missing_runs) VALUES (?, ?, ?, ?, ?)');
    this.deleteMissingOne = db.prepare('DELETE FROM missing_records WHERE sync_id = ? AND entity = ? AND record_key = ?');
    this.selectScope = db.prepare('SELECT fingerprint, scope, recorded_at AS recordedAt FROM scope_fingerprints WHERE sync_id = ?');
    this.upsertScope = db.prepare(
      `INSERT INTO scope_fingerprints (sync_id, fingerprint, scope, recorded_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (sync_id) DO UPDATE SET fingerprint = excluded.fingerprint, scope = excluded.scope, recorded_at = excluded.recorded_at`,
    );
    this.selectKey = db.prepare('SELECT key_hex FROM plan_signing_keys WHERE sync_id = ?').pluck();
    this.insertKey = db.prepare('INSERT OR IGNORE INTO plan_signing_keys (sync_id, key_hex) VALUES (?, ?)');
    this.selectOwnedFacts = db.prepare('SELECT account_id AS accountId, origin, owned_since AS ownedSince FROM owned_members WHERE sync_id = ? AND third_user_id = ?');
    this.insertSeen = db.prepare('INSERT OR IGNORE INTO owned_records_seen (sync_id, entity, platform_id, first_seen_at) VALUES (?, ?, ?, ?)');
    this.selectSeen = db.prepare('SELECT first_seen_at FROM owned_records_seen WHERE sync_id = ? AND entity = ? AND platform_id = ?').pluck();
    // Any trace of this sync.id having written or taken ownership (the reconcile's tables are created by earlier migrations).
    this.selectKnown = db
      .prepare(
        `SELECT EXISTS (SELECT 1 FROM source_snapshots WHERE sync_id = @id) OR EXISTS (SELECT 1 FROM scope_fingerprints WHERE sync_id = @id)
           OR EXISTS (SELECT 1 FROM owned_records_seen WHERE sync_id = @id) OR EXISTS (SELECT 1 FROM owned_members WHERE sync_id = @id)
           OR EXISTS (SELECT 1 FROM adoption_log WHERE sync_id = @id) OR EXISTS (SELECT 1 FROM pending_creates WHERE sync_id = @id)
           OR EXISTS (SELECT 1 FROM runs WHERE result <> 'dry_run' AND json_extract(summary, '$.writes') > 0)`,
      )
      .pluck();
    this.commitTx = db.transaction((c: TrustCommit) => {
      for (const r of c.ownedSeen ?? []) this.insertSeen.run(this.syncId, r.entity, r.platformId, c.at);
      for (const [entity, count] of Object.entries(c.snapshot) as [EntityKind, number][]) this.upsertSnapshot.run(this.syncId, entity, count, c.at);
      this.clearMissing.run(this.syncId);
      for (const m of c.missing) this.insertMissing.run(this.syncId, m.entity, m.key, m.firstMissingAt, m.runs);
      if (c.scope) this.upsertScope.run(this.syncId, c.scope.fingerprint, JSON.stringify(c.scope.scope), c.at);
    });
  }

  /**
   * Whether the state DB knows earlier runs of this sync.id: an accepted run's trust state, owned members, adoptions,
   * pending creates, or a recorded run that wrote (an interrupted first run that created only departments leaves no
   * other trace). False for a new or lost state DB (the state_lost guard compares it with the platform).
   */
  knowsSync(): boolean {
    return this.selectKnown.get({ id: this.syncId }) === 1;
  }

  /** Last good source counts per entity (only entities recorded so far). */
  snapshotCounts(): Partial<Record<EntityKind, number>> {
    const out: Partial<Record<EntityKind, number>> = {};
    for (const r of this.selectSnapshots.iterate(this.syncId) as Iterable<{ entity: EntityKind; record_count: number }>) out[r.entity] = r.record_count;
    return out;
  }

  /** Records missing from the sources, keyed `<entity>:<key>`. */
  missing(): Map<string, MissingRecord> {
    const out = new Map<string, MissingRecord>();
    for (const r of this.selectMissing.iterate(this.syncId) as Iterable<MissingRecord>) out.set(`${r.entity}:${r.key}`, r);
    return out;
  }

  /** Forgets that a record is missing (release). */
  forgetMissing(entity: EntityKind, key: string): void {
    this.deleteMissingOne.run(this.syncId, entity, key);
  }

  /** The scope last accepted, if any. */
  scope(): ScopeRecord | undefined {
    const r = this.selectScope.get(this.syncId) as { fingerprint: string; scope: string; recordedAt: string } | undefined;
    return r ? { fingerprint: r.fingerprint, scope: JSON.parse(r.scope) as Record<string, string>, recordedAt: r.recordedAt } : undefined;
  }

  /** Records the outcome of an accepted run in one transaction: snapshot counts, the missing set, the scope. */
  commit(c: TrustCommit): void {
    this.commitTx(c);
  }

  /** The key saved plans are signed with (created on first use; it never leaves the state DB). */
  planSigningKey(): Buffer {
    const existing = this.selectKey.get(this.syncId) as string | undefined;
    if (existing) return Buffer.from(existing, 'hex');
    this.insertKey.run(this.syncId, randomBytes(32).toString('hex'));
    return Buffer.from(this.selectKey.get(this.syncId) as string, 'hex');
  }

  /** When a department or position was first seen owned by this sync (undefined: not recorded). */
  firstSeenOwned(entity: 'departments' | 'positions', platformId: string): string | undefined {
    return this.selectSeen.get(this.syncId, entity, platformId) as string | undefined;
  }

  /** When and how this sync came to own a member (undefined when it does not). */
  memberOwnership(thirdId: string): MemberOwnershipFacts | undefined {
    return this.selectOwnedFacts.get(this.syncId, thirdId) as MemberOwnershipFacts | undefined;
  }
}

/** What an accepted run records. */
export interface TrustCommit {
  at: string;
  /** Source counts per provided entity. */
  snapshot: Partial<Record<EntityKind, number>>;
  /** The complete set of records missing after this run (replaces the previous set). */
  missing: MissingRecord[];
  scope?: { fingerprint: string; scope: Record<string, string> };
  /** Departments and positions owned after the run (their first sighting is kept). */
  ownedSeen?: { entity: 'departments' | 'positions'; platformId: string }[];
}
