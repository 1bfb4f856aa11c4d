/** The values of the member decision table: its input, its result, and what every row handler reads. */
import type { Change, DesiredMember, PlanWarning, PlatformMember } from '../../domain/index.js';
import type { AccountSet, MemberIndex } from '../../domain/member-table.js';
import type { DiffContext, Target } from '../context.js';
import type { Placement } from './source-create.js';

/** How member diffs find departments. */
export interface MemberDiffInput {
  /** Source department id -> where it is (platform id or `@<change id>`), undefined when unknown. */
  resolveDepartment(sourceId: string): Target | undefined;
  /** Departments that may be deleted in this run: members without a department opinion are taken out of them. */
  removing: ReadonlySet<string>;
  /** The tenant root id (a member "in" it has no department). */
  tenantRootId: string;
  /** Whether a platform department is owned by this sync (managed_by); absent: no such report. */
  isOwnedDepartment?(platformId: string): boolean;
  /** The path (`/Acme/Sales`) of a department target, for descriptions; absent: none shown. */
  departmentLabel?(t: Target): string;
}

/** The member part of a plan. */
export interface MemberDiff {
  /** Creates, adoptions and updates. */
  upserts: Change[];
  removals: Change[];
  /** Members this sync owns (live), for the delete threshold. */
  ownedCount: number;
  /** Department id -> ids of the changes that take members out of it (a delete waits for them). */
  leaving: Map<string, string[]>;
  /** Department id -> members that stay in it (a delete of it cannot succeed). */
  staying: Map<string, string[]>;
}

export type { AccountSet, ContactIndex, Lookup, MemberFinder, MemberIndex, MemberSource, MemberTable, MemberWindow, Membership, UnchangedRule } from '../../domain/member-table.js';

/** Warning code: a member gone from the sources that looks like this sync's but is not owned (reported, kept). */
export const NOT_OWNED_ABSENT = 'not_owned_absent';

/** What the row handlers of one member diff write: the changes, and what they decided about each account. */
export interface MemberResult {
  upserts: Change[];
  removals: Change[];
  /** Warnings in the order they arise (the plan's own list when composed). */
  warnings: PlanWarning[];
  leaving: Map<string, string[]>;
  staying: Map<string, string[]>;
  /** Accounts a desired member or a removal has claimed (a later match on contact does not take them again). */
  taken: AccountSet;
  /** Accounts whose fate this plan decided (changed, or checked and left where they are). */
  handled: AccountSet;
  /** The placement every create into one department shares (source-create.ts), by department target ('' for none). */
  placements: Map<string, Placement>;
}

/** A fresh result that writes its warnings into `warnings` and its claims into `claims`. */
export function newMemberResult(warnings: PlanWarning[], claims: { taken: AccountSet; handled: AccountSet } = { taken: new Set(), handled: new Set() }): MemberResult {
  return { upserts: [], removals: [], warnings, leaving: new Map(), staying: new Map(), taken: claims.taken, handled: claims.handled, placements: new Map() };
}

/** What every member row handler reads: the plan's context, the department view, the index and the options. */
export interface MemberEnv {
  ctx: DiffContext;
  input: MemberDiffInput;
  /** The current window's index (present rows), or the table's point lookups (absent rows). */
  index: MemberIndex;
  /** sync.member_removal: DELETE (status left) or suspend. */
  removalMode: 'left' | 'suspended';
  /** sync.adopt.members. */
  adoptBy: readonly string[];
  /** Whether any source provides members (false: nothing is absent, nothing is removed). */
  provided: boolean;
}

/** One row of the table for a desired member: the rule that matched and the platform record it matched. */
export interface MemberRow {
  row: PresentRowName;
  desired: DesiredMember;
  /** The matched live member (same third id, the account the state DB records, or the same contact). */
  live: PlatformMember | undefined;
  /** The account the state DB records for this source id (a re-hire when it has left). */
  ownedAccount: string | undefined;
  /** How an adoption matched (sync.adopt.members). */
  by: 'email' | 'phone' | undefined;
}

/** The rows of the table for a member in the source, in the order they are tried. */
export type PresentRowName =
  | 'left_in_source'
  | 'left_not_ours'
  | 'update_owned'
  | 'adopt_crashed_create'
  | 'adopt_by_config'
  | 'conflict'
  | 'rekey_owned'
  | 'adopt_by_contact'
  | 'contact_conflict'
  | 'create';

/** Appends to a list in a map of lists. */
export function pushTo<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}
