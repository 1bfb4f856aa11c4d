/**
 * Ownership records of the reconcile in the state DB (migrations 010-019): the members this sync owns (keyed by
 * third_user_id), the adoption log, and the creates in flight (written before the POST, cleared after the answer is
 * recorded) so that a record created by a run that crashed in between is recognised as this sync's own.
 * Departments and positions carry their ownership on the platform (metadata.managed_by) and need no row here.
 */
import type Database from 'better-sqlite3';
import type { EntityKind } from '../domain/entities.js';
import type { PlanValue } from '../domain/plan.js';
import type { Migration } from './migrations/types.js';
import { keysetPages } from './keyset.js';

/**
 * 010: owned members, the adoption log and pending creates. `missing_since`/`missing_runs` are reserved for the
 * grace period of issue 10 (011-019 stay free for its source snapshots).
 */
export const migration010: Migration = {
  version: 10,
  name: 'ownership',
  sql: `
CREATE TABLE owned_members (
  sync_id TEXT NOT NULL,
  third_user_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  origin TEXT NOT NULL CHECK (origin IN ('created', 'adopted')),
  owned_since TEXT NOT NULL,
  missing_since TEXT,
  missing_runs INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (sync_id, third_user_id)
) STRICT;
CREATE UNIQUE INDEX owned_members_account ON owned_members (sync_id, account_id);
CREATE TABLE adoption_log (
  id INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  sync_id TEXT NOT NULL,
  entity TEXT NOT NULL CHECK (entity IN ('departments', 'members', 'positions')),
  third_id TEXT NOT NULL,
  platform_id TEXT NOT NULL,
  matched_by TEXT NOT NULL,
  detail TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE TABLE pending_creates (
  sync_id TEXT NOT NULL,
  entity TEXT NOT NULL CHECK (entity IN ('departments', 'members', 'positions')),
  third_id TEXT NOT NULL,
  started_at TEXT NOT NULL,
  -- members: the e-mail and phone the create posts, so a record found later is recognised only if it matches
  contact TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (sync_id, entity, third_id)
) STRICT;
`,
};

/**
 * 050: member creates whose completing change (a suspended new hire's status PATCH, `Change.completes`) has not
 * succeeded yet. Written with the create's ownership record, cleared when the completing change succeeds, so a
 * later run still sends it as part of the create (a create-only policy lets it through) instead of as an update.
 */
export const migration050: Migration = {
  version: 50,
  name: 'unfinished-creates',
  sql: `
CREATE TABLE unfinished_creates (
  sync_id TEXT NOT NULL,
  third_id TEXT NOT NULL,
  -- JSON object: the fields the completing change sets (e.g. {"status":"suspended"})
  owed TEXT NOT NULL,
  since TEXT NOT NULL,
  PRIMARY KEY (sync_id, third_id)
) STRICT;
`,
};

/** One adoption, as logged. */
export interface AdoptionRecord {
  at: string;
  entity: EntityKind;
  thirdId: string;
  platformId: string;
  /** `third_id`, `name`, `email`, `phone`, `crashed_create`, `member_exists`. */
  matchedBy: string;
  detail?: string;
}

/** The ownership repository of one sync id. Statements are prepared once. */
export class OwnershipStore {
  private readonly selectOwned: Database.Statement;
  private readonly selectOwnedAfter: Database.Statement;
  private readonly selectAccountOf: Database.Statement;
  private readonly selectThirdOf: Database.Statement;
  private readonly countOwned: Database.Statement;
  private readonly deleteByAccount: Database.Statement;
  private readonly upsertOwned: Database.Statement;
  private readonly deleteOwned: Database.Statement;
  private readonly insertAdoption: Database.Statement;
  private readonly selectAdoptions: Database.Statement;
  private readonly insertPending: Database.Statement;
  private readonly deletePending: Database.Statement;
  private readonly selectPending: Database.Statement;
  private readonly ownTx: (thirdId: string, accountId: string, origin: 'created' | 'adopted', at: string) => void;
  private readonly upsertOwed: Database.Statement;
  private readonly deleteOwed: Database.Statement;
  private readonly selectOwed: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    readonly syncId: string,
  ) {
    this.selectOwned = db.prepare('SELECT third_user_id, account_id FROM owned_members WHERE sync_id = ?');
    this.selectOwnedAfter = db.prepare('SELECT third_user_id, account_id FROM owned_members WHERE sync_id = ? AND third_user_id > ? ORDER BY third_user_id LIMIT ?').raw();
    this.selectAccountOf = db.prepare('SELECT account_id FROM owned_members WHERE sync_id = ? AND third_user_id = ?').pluck();
    this.selectThirdOf = db.prepare('SELECT third_user_id FROM owned_members WHERE sync_id = ? AND account_id = ?').pluck();
    this.countOwned = db.prepare('SELECT count(*) FROM owned_members WHERE sync_id = ?').pluck();
    this.deleteByAccount = db.prepare('DELETE FROM owned_members WHERE sync_id = ? AND account_id = ? AND third_user_id <> ?');
    this.upsertOwned = db.prepare(
      `INSERT INTO owned_members (sync_id, third_user_id, account_id, origin, owned_since) VALUES (@sync, @third, @account, @origin, @at)
       ON CONFLICT (sync_id, third_user_id) DO UPDATE SET account_id = excluded.account_id, missing_since = NULL, missing_runs = 0,
         origin = CASE WHEN owned_members.account_id = excluded.account_id THEN owned_members.origin ELSE excluded.origin END,
         owned_since = CASE WHEN owned_members.account_id = excluded.account_id THEN owned_members.owned_since ELSE excluded.owned_since END`,
    );
    this.deleteOwned = db.prepare('DELETE FROM owned_members WHERE sync_id = ? AND third_user_id = ?');
    this.insertAdoption = db.prepare(
      'INSERT INTO adoption_log (at, sync_id, entity, third_id, platform_id, matched_by, detail) VALUES (@at, @sync, @entity, @thirdId, @platformId, @matchedBy, @detail)',
    );
    this.selectAdoptions = db.prepare('SELECT at, entity, third_id AS thirdId, platform_id AS platformId, matched_by AS matchedBy, detail FROM adoption_log WHERE sync_id = ? ORDER BY id');
    this.insertPending = db.prepare(
      'INSERT INTO pending_creates (sync_id, entity, third_id, started_at, contact) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET contact = excluded.contact',
    );
    this.deletePending = db.prepare('DELETE FROM pending_creates WHERE sync_id = ? AND entity = ? AND third_id = ?');
    this.selectPending = db.prepare('SELECT entity, third_id, contact FROM pending_creates WHERE sync_id = ?');
    this.upsertOwed = db.prepare('INSERT INTO unfinished_creates (sync_id, third_id, owed, since) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET owed = excluded.owed');
    this.deleteOwed = db.prepare('DELETE FROM unfinished_creates WHERE sync_id = ? AND third_id = ?');
    this.selectOwed = db.prepare('SELECT third_id, owed FROM unfinished_creates WHERE sync_id = ?');
    this.ownTx = db.transaction((thirdId: string, accountId: string, origin: 'created' | 'adopted', at: string) => {
      // One account, one key: a member re-keyed to a new third id drops its old row.
      this.deleteByAccount.run(this.syncId, accountId, thirdId);
      this.upsertOwned.run({ sync: this.syncId, third: thirdId, account: accountId, origin, at });
      this.deletePending.run(this.syncId, 'members', thirdId);
    });
  }

  /** The state DB's file (for messages). */
  get dbPath(): string {
    return this.db.name;
  }

  /** The connection's busy timeout in ms (for messages). */
  get busyTimeoutMs(): number {
    return this.db.pragma('busy_timeout', { simple: true }) as number;
  }

  /**
   * Runs `fn` in one transaction of the state DB (the connection the mirror shares), so that a group of writes
   * costs one commit; the repositories' own transactions inside it become savepoints.
   */
  inTransaction(fn: () => void): void {
    // IMMEDIATE: the write lock is taken at BEGIN, through the busy timeout. A deferred transaction whose first
    // statement reads would fail at once (SQLITE_BUSY_SNAPSHOT, no wait) when another process committed meanwhile.
    this.db.transaction(fn).immediate();
  }

  /** The account this sync owns under a source id, if any. */
  accountOf(thirdId: string): string | undefined {
    return this.selectAccountOf.get(this.syncId, thirdId) as string | undefined;
  }

  /** The source id this sync owns an account under, if it owns it. */
  sourceIdOfAccount(accountId: string): string | undefined {
    return this.selectThirdOf.get(this.syncId, accountId) as string | undefined;
  }

  /** How many members this sync owns (live or left). */
  ownedCount(): number {
    return this.countOwned.get(this.syncId) as number;
  }

  /** Members this sync owns: third_user_id -> account_id, a window at a time in source id order. */
  *owned(): Generator<[string, string]> {
    const windows = keysetPages((after: string, limit) => this.selectOwnedAfter.all(this.syncId, after, limit) as [string, string][], (r) => r[0], '', 2_000);
    for (const rows of windows) yield* rows;
  }

  /** Members this sync owns: third_user_id -> account_id, all in the heap (tests and small state DBs). */
  ownedMembers(): Map<string, string> {
    const out = new Map<string, string>();
    for (const r of this.selectOwned.iterate(this.syncId) as Iterable<{ third_user_id: string; account_id: string }>) out.set(r.third_user_id, r.account_id);
    return out;
  }

  /** Records a member as owned (created or adopted by this sync) and clears its pending create, in one transaction. */
  recordOwnedMember(thirdId: string, accountId: string, origin: 'created' | 'adopted', at: string): void {
    this.ownTx(thirdId, accountId, origin, at);
  }

  /** Stops owning a member (issue 10's `release`); nothing on the platform changes. */
  releaseMember(thirdId: string): boolean {
    this.deleteOwed.run(this.syncId, thirdId);
    return this.deleteOwned.run(this.syncId, thirdId).changes > 0;
  }

  /** Notes that the create of member `thirdId` still owes `fields` (its completing change has not succeeded yet). */
  oweCompletion(thirdId: string, fields: Readonly<Record<string, PlanValue>>, at: string): void {
    this.upsertOwed.run(this.syncId, thirdId, JSON.stringify(fields), at);
  }

  /** The create of member `thirdId` is complete (its completing change succeeded, or nothing is owed any more). */
  settleCompletion(thirdId: string): void {
    this.deleteOwed.run(this.syncId, thirdId);
  }

  /** Member creates that still owe their completing change: third_user_id -> the fields it sets. */
  owedCompletions(): Map<string, Readonly<Record<string, PlanValue>>> {
    const out = new Map<string, Readonly<Record<string, PlanValue>>>();
    for (const r of this.selectOwed.iterate(this.syncId) as Iterable<{ third_id: string; owed: string }>) out.set(r.third_id, JSON.parse(r.owed) as Record<string, PlanValue>);
    return out;
  }

  /** Logs an adoption. */
  logAdoption(a: AdoptionRecord): void {
    this.insertAdoption.run({ ...a, detail: a.detail ?? '', sync: this.syncId });
  }

  /** The adoption log, oldest first. */
  adoptions(): AdoptionRecord[] {
    return this.selectAdoptions.all(this.syncId) as AdoptionRecord[];
  }

  /**
   * Notes a create about to be sent (before the POST), so a crash before its answer is recorded can be recognised.
   * `contact` (members): the e-mail and phone it posts (planner/normalise.ts `pendingContact`).
   */
  beginCreate(entity: EntityKind, thirdId: string, at: string, contact = ''): void {
    this.insertPending.run(this.syncId, entity, thirdId, at, contact);
  }

  /** Clears a pending create once its outcome is recorded. */
  endCreate(entity: EntityKind, thirdId: string): void {
    this.deletePending.run(this.syncId, entity, thirdId);
  }

  /** Third ids of creates begun but not known to have finished, per entity. */
  pendingCreates(): Record<EntityKind, Set<string>> {
    const out: Record<EntityKind, Set<string>> = { departments: new Set(), members: new Set(), positions: new Set() };
    for (const r of this.selectPending.iterate(this.syncId) as Iterable<{ entity: EntityKind; third_id: string }>) out[r.entity].add(r.third_id);
    return out;
  }

  /** Pending member creates: third_user_id -> the contact noted with it. */
  pendingMemberContacts(): Map<string, string> {
    const out = new Map<string, string>();
    for (const r of this.selectPending.iterate(this.syncId) as Iterable<{ entity: EntityKind; third_id: string; contact: string }>) {
      if (r.entity === 'members') out.set(r.third_id, r.contact);
    }
    return out;
  }
}

