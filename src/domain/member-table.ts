/**
 * The member table's ports (issue 42): both sides of the member decision table as the planner reads them, and point
 * reads of the mirror's members. The planner (src/planner/members/) runs its rows over them; the list
 * implementation holds lists in the heap (src/planner/members/list-table.ts), the state DB's answers from its tables
 * (src/mirror/member-table.ts).
 */
import type { DesiredMember, DesiredMembers } from './desired.js';
import type { PlatformMember } from './entities.js';

/** Where a planning finds the member table of its desired members, and a selector its members (PlannerSnapshot.members). */
export interface MemberSource {
  table(desired: DesiredMembers): MemberTable;
  finder(): MemberFinder;
}

/**
 * Point reads of the platform's members (the mirror) and this sync's ownership records: what a selector, an
 * explanation or a history looks up, without listing a million members to find one.
 */
export interface MemberFinder {
  /** Live members whose normalised e-mail is `email` (normEmail), in account order. */
  liveByEmail(email: string): PlatformMember[];
  /** Live members known under `sourceId` (sourceIdOf), in account order. */
  liveBySourceId(sourceId: string): PlatformMember[];
  /** The account a source id is on: the one this sync owns under it, else the first live member with that third id. */
  accountOf(sourceId: string): string | undefined;
  /** The source id a member is known under: this sync's ownership record of its account, else its third id. */
  sourceIdOf(m: PlatformMember): string;
}

/** A lookup by key (a Map is one; the state DB's tables answer through one too). */
export interface Lookup<V> {
  get(key: string): V | undefined;
}

/** A membership test (a Set is one). */
export interface Membership {
  has(key: string): boolean;
}

/** A set of accounts the rows add to as they decide (a Set is one; the state DB's claims table is another). */
export interface AccountSet extends Membership {
  add(account: string): void;
}

/**
 * The mirror and the ownership side of the table, as lookups by key: for one window of desired members, what their
 * keys match (prefetched); for the absent rows, point reads (members/table.ts).
 */
export interface MemberIndex {
  /** Live (not left) members by third_user_id (among several, the last in account order). */
  liveByThird: Lookup<PlatformMember>;
  /** Live members by account_id. */
  liveByAccount: Lookup<PlatformMember>;
  /** Members this sync owns: third_user_id -> account_id (state DB). */
  ownedMembers: Lookup<string>;
  /** Accounts this sync owns (state DB). */
  ownedAccounts: Membership;
  /** Source ids of the desired members (status left included; not those the lifecycle holds back). */
  desiredIds(): Membership;
  /** Live members by normalised e-mail and phone, for the desired members that have no key match. */
  contacts(): ContactIndex;
}

/** Live members by normalised contact. */
export interface ContactIndex {
  byEmail: Lookup<PlatformMember>;
  byPhone: Lookup<PlatformMember>;
}

/**
 * What makes a desired member certainly unchanged (issue 42: a table may leave such members out of the windows): it
 * has no dated lifecycle, is not `left`, and is live and owned under its source id with every owned field equal as
 * the platform holds it (name, title, e-mail, phone, status: byte for byte, so no normalisation can differ), in the
 * department its department id resolves to, neither in a department being removed nor owed a completion, and no
 * other desired member matches its account by contact (the rows that take it must meet in source order). Such a
 * member's row (update_owned) writes nothing and warns of nothing, and what it claims no other row asks.
 */
export interface UnchangedRule {
  /** Source department id -> the platform department it already is (departments being created are not listed). */
  departments: ReadonlyMap<string, string>;
  /** Platform ids of the departments this plan removes. */
  removing: ReadonlySet<string>;
  /** The tenant root's platform id (a member in it has no department). */
  tenantRootId: string;
  /** Source ids whose earlier create still owes its completing change. */
  owed: ReadonlySet<string>;
}

/** One window of desired members, in source order, with the index of what their keys match. */
export interface MemberWindow {
  members: readonly DesiredMember[];
  index: MemberIndex;
}

/**
 * Both sides of the member table as the planner reads them (issue 42): the desired members a window at a time, each
 * window with what its keys match on the mirror and in the ownership records, and the absent side as queries. A list
 * implementation holds them in the heap (members/list-table.ts, for tests and small inputs); the state DB's answers
 * from its tables (src/mirror/member-table.ts), so a run holds one window, the claims it needs and its changes.
 */
export interface MemberTable {
  /**
   * The desired members in source order, a window at a time (the lifecycle rules run on them first). With `unchanged`,
   * the table may leave out members that rule shows unchanged: the run's planning then reads the changes, not the
   * tenant (the list table reads every member; the equivalence test holds the two alike).
   */
  windows(unchanged?: UnchangedRule): Iterable<MemberWindow>;
  /** Point lookups by key, for the absent rows. */
  lookups(): MemberIndex;
  /** The accounts the rows take and handle. */
  claims(): { taken: AccountSet; handled: AccountSet };
  /** Owned members (third id -> account) whose source id no desired member has, or one `held` back, in owned order. */
  ownedAbsent(held: ReadonlySet<string>): Iterable<readonly [string, string]>;
  /**
   * Live members no row handled, in account order; the table may leave out those no absent row can take: owned ones
   * with a desired source id outside the departments in `removing`.
   */
  leftovers(removing: ReadonlySet<string>, held: ReadonlySet<string>): Iterable<PlatformMember>;
  /** Live members this sync owns. */
  ownedCount(): number;
}

