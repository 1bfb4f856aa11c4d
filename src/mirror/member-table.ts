/**
 * The member table from the state DB (issue 42): the desired members where the sources staged them
 * (./member-stage.ts), the mirror's members and this sync's ownership records, joined a window at a time. For each
 * window of desired members (in staging order) one query per side fetches what their keys match; the absent side
 * is two ordered queries that leave out what the rows claimed; the claims (accounts taken and handled) go to a
 * temporary table. A run holds one window, its claims buffer and its changes: not the tenant.
 */
import type Database from 'better-sqlite3';
import type { DesiredMember, DesiredMembers } from '../domain/desired.js';
import type { PlatformMember } from '../domain/entities.js';
import type { AccountSet, ContactIndex, Lookup, MemberFinder, MemberIndex, MemberSource, MemberTable, MemberWindow, Membership, UnchangedRule } from '../domain/member-table.js';
import { normEmail, normPhone } from '../domain/normalise.js';
import { fromRow, SPECS } from './mirror.js';
import { keysetPages } from './keyset.js';
import { openMemberStage, STAGED_COLUMNS, stagedDesired, StagedMembers, STAGE_WINDOW } from './member-stage.js';

const M = SPECS.members;
const COLS = M.columns.map((c) => `m.${c.name}`).join(', ') + ', m.extra';
const member = (row: readonly unknown[]): PlatformMember => fromRow(M, row) as unknown as PlatformMember;
const json = (values: Iterable<string>): string => JSON.stringify([...values]);

/** The member side of the planner's snapshot from the state DB: the table of a run's desired members, and the finder. */
export function stateMembers(db: Database.Database, syncId: string): MemberSource {
  return { table: (desired) => new StateMemberTable(db, syncId, stagedIn(db, desired)), finder: () => stateFinder(db, syncId) };
}

/** `desired` as the connection's staged members: as they are when the run staged them here, else staged now. */
function stagedIn(db: Database.Database, desired: DesiredMembers): StagedMembers {
  if (desired instanceof StagedMembers && desired.db === db) return desired;
  const stage = openMemberStage(db);
  for (const m of desired) stage.add(0, m);
  return stage.members();
}

/** The accounts the rows claim, in a temporary table; the latest in a buffer until the next query needs them. */
class Claims {
  private readonly buffer = new Map<string, number>();
  private readonly has: Database.Statement;
  private readonly write: (rows: [string, number][]) => void;

  constructor(private readonly db: Database.Database) {
    db.exec(`CREATE TEMP TABLE IF NOT EXISTS member_claims (account_id TEXT PRIMARY KEY, bits INTEGER NOT NULL) WITHOUT ROWID; DELETE FROM member_claims;`);
    this.has = db.prepare('SELECT bits FROM member_claims WHERE account_id = ?').pluck();
    const upsert = db.prepare('INSERT INTO member_claims (account_id, bits) VALUES (?, ?) ON CONFLICT DO UPDATE SET bits = bits | excluded.bits');
    this.write = db.transaction((rows: [string, number][]) => {
      for (const [a, b] of rows) upsert.run(a, b);
    });
  }

  /** 1: taken, 2: handled. */
  set(bit: number): AccountSet {
    return {
      has: (a) => (((this.buffer.get(a) ?? 0) | ((this.has.get(a) as number | undefined) ?? 0)) & bit) !== 0,
      add: (a) => {
        this.buffer.set(a, (this.buffer.get(a) ?? 0) | bit);
        if (this.buffer.size >= STAGE_WINDOW) this.flush();
      },
    };
  }

  flush(): void {
    if (this.buffer.size === 0) return;
    this.write([...this.buffer]);
    this.buffer.clear();
  }
}

/** The member table of one planning over the state DB. */
class StateMemberTable implements MemberTable {
  private readonly claimsTable: Claims;
  private contactIndex: { index: ContactIndex; owned: Set<string> } | undefined;
  private readonly q: ReturnType<typeof statements>;

  constructor(
    private readonly db: Database.Database,
    private readonly syncId: string,
    private readonly desired: StagedMembers,
  ) {
    this.claimsTable = new Claims(db);
    this.q = statements(db);
  }

  *windows(unchanged?: UnchangedRule): Generator<MemberWindow> {
    const contacts = this.contacts();
    const members = unchanged ? this.changedMembers(unchanged, contacts.index) : this.desired.windows();
    for (const window of members) yield { members: window, index: this.windowIndex(window, contacts) };
  }

  /**
   * The desired members in staging order, a window at a time, without those the rule shows unchanged: the query
   * compares them with their owned accounts in SQLite, so an unchanged tenant reaches the heap as nothing.
   */
  private *changedMembers(rule: UnchangedRule, contacts: ContactIndex): Generator<DesiredMember[]> {
    const contacted = new Set<string>();
    for (const lookup of [contacts.byEmail, contacts.byPhone]) for (const m of (lookup as ReadonlyMap<string, PlatformMember>).values()) contacted.add(m.account_id);
    fillRule(this.db, rule, contacted);
    const args = { sync: this.syncId, root: rule.tenantRootId };
    const windows = keysetPages((after: number, limit) => this.q.changed.all({ ...args, after, limit }) as unknown[][], (r) => r[0] as number, 0, STAGE_WINDOW);
    for (const rows of windows) yield rows.map(stagedDesired);
  }

  /** What the keys of one window match: live members by third id and by owned account, and their ownership. */
  private windowIndex(members: readonly DesiredMember[], contacts: { index: ContactIndex; owned: Set<string> }): MemberIndex {
    const ids = json(members.map((d) => d.source_id));
    const liveByThird = new Map<string, PlatformMember>();
    const liveByAccount = new Map<string, PlatformMember>();
    for (const row of this.q.liveByThirds.all(ids) as unknown[][]) {
      const m = member(row);
      liveByThird.set(m.third_user_id, m);
      liveByAccount.set(m.account_id, m);
    }
    const ownedMembers = new Map<string, string>();
    for (const [third, account] of this.q.ownedByThirds.all(this.syncId, ids) as [string, string][]) ownedMembers.set(third, account);
    const missing = [...ownedMembers.values()].filter((a) => !liveByAccount.has(a));
    if (missing.length > 0) for (const row of this.q.liveByAccounts.all(json(missing)) as unknown[][]) liveByAccount.set(member(row).account_id, member(row));
    const ownedAccounts = new Set<string>(contacts.owned);
    for (const a of this.q.ownedAmong.all(this.syncId, json(liveByAccount.keys())) as string[]) ownedAccounts.add(a);
    return { liveByThird, liveByAccount, ownedMembers, ownedAccounts, desiredIds: () => this.desiredIds, contacts: () => contacts.index };
  }

  private readonly desiredIds: Membership = { has: (id) => this.q.desiredHas.get(id) !== undefined };

  /**
   * Live members by contact for the desired members no key matches (they alone reach a contact row): from the
   * smaller side, the wanted contacts or the live members, so it costs what the plan changes, not the tenant.
   */
  private contacts(): { index: ContactIndex; owned: Set<string> } {
    if (this.contactIndex) return this.contactIndex;
    const wanted = { emails: new Set<string>(), phones: new Set<string>() };
    const live = this.q.liveCount.get() as number;
    let count = 0;
    if (live > 0) {
      for (const [email, phone] of this.q.unmatchedContacts.iterate() as Iterable<[string | null, string | null]>) {
        if (email) wanted.emails.add(normEmail(email));
        if (phone) wanted.phones.add(normPhone(phone));
        if (++count > live) break;
      }
    }
    const byEmail = new Map<string, PlatformMember>();
    const byPhone = new Map<string, PlatformMember>();
    const everyone = count > live;
    if (count > 0) {
      for (const m of this.liveMembers()) {
        const e = m.email === '' ? '' : normEmail(m.email);
        const p = m.phone === '' ? '' : normPhone(m.phone);
        if (e !== '' && (everyone || wanted.emails.has(e))) byEmail.set(e, m);
        if (p !== '' && (everyone || wanted.phones.has(p))) byPhone.set(p, m);
      }
    }
    const accounts = new Set([...byEmail.values(), ...byPhone.values()].map((m) => m.account_id));
    const owned = new Set(this.q.ownedAmong.all(this.syncId, json(accounts)) as string[]);
    return (this.contactIndex = { index: { byEmail, byPhone }, owned });
  }

  /** Every live member in account order, a window at a time. */
  private *liveMembers(): Generator<PlatformMember> {
    for (const rows of liveWindows(this.q.liveAfter)) for (const row of rows) yield member(row);
  }

  lookups(): MemberIndex {
    const q = this.q;
    const liveByThird: Lookup<PlatformMember> = { get: (t) => row(q.liveByThird.get(t)) };
    const liveByAccount: Lookup<PlatformMember> = { get: (a) => row(q.liveByAccount.get(a)) };
    const ownedMembers: Lookup<string> = { get: (t) => q.ownedByThird.get(this.syncId, t) as string | undefined };
    const ownedAccounts: Membership = { has: (a) => q.ownedAccount.get(this.syncId, a) !== undefined };
    return { liveByThird, liveByAccount, ownedMembers, ownedAccounts, desiredIds: () => this.desiredIds, contacts: () => this.contacts().index };
  }

  claims(): { taken: AccountSet; handled: AccountSet } {
    return { taken: this.claimsTable.set(1), handled: this.claimsTable.set(2) };
  }

  /** Owned, live members whose source id no desired member has (or the lifecycle held back), not taken, by source id. */
  *ownedAbsent(held: ReadonlySet<string>): Generator<readonly [string, string]> {
    this.claimsTable.flush();
    const heldIds = json(held);
    const windows = keysetPages((after: string, limit) => this.q.ownedAbsent.all(this.syncId, after, heldIds, limit) as [string, string][], (r) => r[0], '', STAGE_WINDOW);
    for (const rows of windows) yield* rows;
  }

  /** Live members not handled that an absent row could take: not owned and not desired, or in a department being removed. */
  *leftovers(removing: ReadonlySet<string>, held: ReadonlySet<string>): Generator<PlatformMember> {
    this.claimsTable.flush();
    const args = { sync: this.syncId, held: json(held), removing: json(removing) };
    const windows = keysetPages((after: string, limit) => this.q.leftovers.all({ ...args, after, limit }) as unknown[][], (r) => r[0] as string, '', STAGE_WINDOW);
    for (const rows of windows) for (const r of rows) yield member(r);
  }

  ownedCount(): number {
    return this.q.ownedCount.get(this.syncId) as number;
  }
}

const row = (r: unknown): PlatformMember | undefined => (r === undefined ? undefined : member(r as unknown[]));

/** Live members' rows in account order, a window at a time (`after` takes the last account id read and a limit). */
const liveWindows = (after: Database.Statement): Generator<unknown[][]> => keysetPages((last: string, limit) => after.all(last, limit) as unknown[][], (r) => r[0] as string, '', STAGE_WINDOW);

/** The rule's sets as the connection's temporary tables, for the query of the changed members. */
function fillRule(db: Database.Database, rule: UnchangedRule, contacted: ReadonlySet<string>): void {
  db.exec('DELETE FROM unchanged_targets; DELETE FROM unchanged_not;');
  const target = db.prepare('INSERT INTO unchanged_targets (source_id, platform_id) VALUES (?, ?)');
  const not = db.prepare('INSERT OR IGNORE INTO unchanged_not (kind, id) VALUES (?, ?)');
  db.transaction(() => {
    for (const [sid, id] of rule.departments) target.run(sid, id);
    for (const id of rule.removing) not.run('removing', id);
    for (const id of rule.owed) not.run('owed', id);
    for (const id of contacted) not.run('contacted', id);
  })();
}

/** The rule's tables (UnchangedRule): the departments that already are, and the ids a member must not be or sit in. */
const RULE_TABLES = `
CREATE TEMP TABLE IF NOT EXISTS unchanged_targets (source_id TEXT PRIMARY KEY, platform_id TEXT NOT NULL) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS unchanged_not (kind TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (kind, id)) WITHOUT ROWID;`;

/** The table's statements, prepared once per planning. */
function statements(db: Database.Database) {
  db.exec(RULE_TABLES);
  const live = "m.status <> 'left'";
  return {
    liveByThirds: db.prepare(`SELECT ${COLS} FROM mirror_members m WHERE m.third_user_id IN (SELECT value FROM json_each(?)) AND ${live} ORDER BY m.account_id`).raw(),
    liveByAccounts: db.prepare(`SELECT ${COLS} FROM mirror_members m WHERE m.account_id IN (SELECT value FROM json_each(?)) AND ${live}`).raw(),
    ownedByThirds: db.prepare('SELECT third_user_id, account_id FROM owned_members WHERE sync_id = ? AND third_user_id IN (SELECT value FROM json_each(?))').raw(),
    ownedAmong: db.prepare('SELECT account_id FROM owned_members WHERE sync_id = ? AND account_id IN (SELECT value FROM json_each(?))').pluck(),
    liveByThird: db.prepare(`SELECT ${COLS} FROM mirror_members m WHERE m.third_user_id = ? AND ${live} ORDER BY m.account_id DESC LIMIT 1`).raw(),
    liveByAccount: db.prepare(`SELECT ${COLS} FROM mirror_members m WHERE m.account_id = ? AND ${live}`).raw(),
    ownedByThird: db.prepare('SELECT account_id FROM owned_members WHERE sync_id = ? AND third_user_id = ?').pluck(),
    ownedAccount: db.prepare('SELECT 1 FROM owned_members WHERE sync_id = ? AND account_id = ?').pluck(),
    desiredHas: db.prepare('SELECT 1 FROM staged_members WHERE source_id = ?').pluck(),
    liveCount: db.prepare(`SELECT count(*) FROM mirror_members m WHERE ${live}`).pluck(),
    liveAfter: db.prepare(`SELECT ${COLS} FROM mirror_members m WHERE m.account_id > ? AND ${live} ORDER BY m.account_id LIMIT ?`).raw(),
    unmatchedContacts: db.prepare(
      `SELECT s.email, s.phone FROM staged_members s WHERE (s.status IS NULL OR s.status <> 'left') AND (s.email IS NOT NULL OR s.phone IS NOT NULL)
       AND NOT EXISTS (SELECT 1 FROM mirror_members m WHERE m.third_user_id = s.source_id AND ${live})`,
    ).raw(),
    ownedAbsent: db.prepare(
      `SELECT o.third_user_id, o.account_id FROM owned_members o
       WHERE o.sync_id = ? AND o.third_user_id > ?
         AND (NOT EXISTS (SELECT 1 FROM staged_members s WHERE s.source_id = o.third_user_id) OR o.third_user_id IN (SELECT value FROM json_each(?)))
         AND EXISTS (SELECT 1 FROM mirror_members m WHERE m.account_id = o.account_id AND ${live})
         AND NOT EXISTS (SELECT 1 FROM member_claims c WHERE c.account_id = o.account_id AND (c.bits & 1) <> 0)
       ORDER BY o.third_user_id LIMIT ?`,
    ).raw(),
    leftovers: db.prepare(
      `SELECT ${COLS} FROM mirror_members m
       WHERE m.account_id > @after AND ${live}
         AND NOT EXISTS (SELECT 1 FROM member_claims c WHERE c.account_id = m.account_id AND (c.bits & 2) <> 0)
         AND ((NOT EXISTS (SELECT 1 FROM owned_members o WHERE o.sync_id = @sync AND o.account_id = m.account_id)
               AND (m.third_user_id = '' OR m.third_user_id IN (SELECT value FROM json_each(@held))
                    OR NOT EXISTS (SELECT 1 FROM staged_members s WHERE s.source_id = m.third_user_id)))
              OR m.department_id IN (SELECT value FROM json_each(@removing)))
       ORDER BY m.account_id LIMIT @limit`,
    ).raw(),
    ownedCount: db.prepare(`SELECT count(*) FROM owned_members o JOIN mirror_members m ON m.account_id = o.account_id WHERE o.sync_id = ? AND ${live}`).pluck(),
    changed: db.prepare(`SELECT ${STAGED_COLUMNS} FROM staged_members s WHERE s.seq > @after AND NOT EXISTS (${UNCHANGED}) ORDER BY s.seq LIMIT @limit`).raw(),
  };
}

/** The member's department as the plan compares it: '' for the tenant root (no department). */
const CURRENT_DEPT = "(CASE WHEN m.department_id = @root THEN '' ELSE m.department_id END)";

/**
 * The staged member `s` is certainly unchanged (UnchangedRule): its owned account is live under its source id and
 * holds every field as the source gives it, byte for byte.
 */
const UNCHANGED = `
SELECT 1 FROM owned_members o JOIN mirror_members m ON m.account_id = o.account_id
WHERE o.sync_id = @sync AND o.third_user_id = s.source_id
  AND m.status <> 'left' AND m.third_user_id = s.source_id
  AND s.start_at IS NULL AND s.end_at IS NULL AND coalesce(s.status, 'active') <> 'left'
  AND m.display_name = s.display_name
  AND (s.title IS NULL OR s.title = m.title)
  AND (s.email IS NULL OR s.email = '' OR s.email = m.email)
  AND (s.phone IS NULL OR s.phone = '' OR s.phone = m.phone)
  AND (CASE WHEN coalesce(s.status, 'active') = 'suspended' THEN m.status = 'suspended' ELSE m.status <> 'suspended' END)
  AND NOT EXISTS (SELECT 1 FROM unchanged_not n WHERE n.kind = 'removing' AND n.id = ${CURRENT_DEPT})
  AND (s.department_source_id IS NULL OR EXISTS (SELECT 1 FROM unchanged_targets t WHERE t.source_id = s.department_source_id AND t.platform_id = ${CURRENT_DEPT}))
  AND NOT EXISTS (SELECT 1 FROM unchanged_not n WHERE n.kind = 'owed' AND n.id = s.source_id)
  AND NOT EXISTS (SELECT 1 FROM unchanged_not n WHERE n.kind = 'contacted' AND n.id = m.account_id)`;

/** Point reads of the mirror's members and this sync's ownership. */
export function stateFinder(db: Database.Database, syncId: string): MemberFinder {
  const live = "m.status <> 'left'";
  const bySource = db
    .prepare(
      `SELECT ${COLS} FROM mirror_members m LEFT JOIN owned_members o ON o.sync_id = ? AND o.account_id = m.account_id
       WHERE ${live} AND (o.third_user_id = ? OR (o.third_user_id IS NULL AND m.third_user_id = ?)) ORDER BY m.account_id`,
    )
    .raw();
  const ownedByThird = db.prepare('SELECT account_id FROM owned_members WHERE sync_id = ? AND third_user_id = ?').pluck();
  const firstByThird = db.prepare(`SELECT m.account_id FROM mirror_members m WHERE m.third_user_id = ? AND ${live} ORDER BY m.account_id LIMIT 1`).pluck();
  const thirdOfAccount = db.prepare('SELECT third_user_id FROM owned_members WHERE sync_id = ? AND account_id = ?').pluck();
  const after = db.prepare(`SELECT ${COLS} FROM mirror_members m WHERE m.account_id > ? AND ${live} ORDER BY m.account_id LIMIT ?`).raw();
  return {
    liveByEmail(email) {
      const out: PlatformMember[] = [];
      for (const rows of liveWindows(after)) {
        for (const r of rows) {
          const m = member(r);
          if (m.email !== '' && normEmail(m.email) === email) out.push(m);
        }
      }
      return out;
    },
    liveBySourceId: (sourceId) => (bySource.all(syncId, sourceId, sourceId) as unknown[][]).map(member),
    accountOf: (sourceId) => (ownedByThird.get(syncId, sourceId) as string | undefined) ?? (firstByThird.get(sourceId) as string | undefined),
    sourceIdOf: (m) => (thirdOfAccount.get(syncId, m.account_id) as string | undefined) ?? m.third_user_id,
  };
}
