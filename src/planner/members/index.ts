/**
 * Members: desired x mirror x ownership -> create / adopt / update / remove, as a decision table. "Owned" = the state
 * DB records the account under this sync.id. Each desired member is keyed by its source id (member-index.ts: the live
 * record with that third_user_id, or the live account the state DB records for it) and goes to the first row that
 * matches (present-rows.ts); then every owned member no desired member claimed, and every live member left over,
 * goes to the first absent row that matches (absent-rows.ts). First match wins.
 *
 * In the source (present-rows.ts; one row per desired member, in source order):
 *
 * | row                    | desired         | mirror (live)                         | ownership          | action                                         |
 * |------------------------|-----------------|---------------------------------------|--------------------|------------------------------------------------|
 * | `left_in_source`       | status left     | same third id / owned account         | owned              | removal per sync.member_removal (remove-member.ts) |
 * | `left_not_ours`        | status left     | none, or same third id                | not owned          | nothing                                        |
 * | `update_owned`         | present         | same third id / owned account         | owned              | update owned fields that differ (move, status); unpatchable_drift warning; owed completion of an earlier create |
 * | `adopt_crashed_create` | present         | same third id, pending create contact | not owned, pending | adopt (crashed create of this sync) + patch    |
 * | `adopt_by_config`      | present         | same third id                         | sync.adopt matches | adopt (matched by e-mail / phone) + patch      |
 * | `conflict`             | present         | same third id                         | not owned          | warning not_owned_conflict (blocked); left alone |
 * | `rekey_owned`          | present         | same phone / e-mail, other third id   | owned              | update: re-key third_user_id (+ other fields)  |
 * | `adopt_by_contact`     | present         | same phone / e-mail, other third id   | sync.adopt matches | adopt + patch third_user_id                    |
 * | `contact_conflict`     | present         | same phone / e-mail, other third id   | not owned          | warning not_owned_conflict (contact_not_owned, blocked); not created |
 * | `create`               | present         | none (or only `left`, or contact taken) | -                | create (re-hire: re-adds the owned account); suspended: + a PATCH that completes the create |
 *
 * Absent from the source (absent-rows.ts; owned members in state DB order, then live members in mirror order):
 *
 * | row                           | desired                     | mirror (live)                   | ownership            | action                                  |
 * |-------------------------------|-----------------------------|---------------------------------|----------------------|-----------------------------------------|
 * | `kept_not_provided`           | no source provides members  | live                            | owned                | kept                                    |
 * | `kept_quarantined`            | quarantined                 | live                            | owned                | kept; warning quarantined_kept          |
 * | `gone`                        | absent                      | live                            | owned                | removal per sync.member_removal         |
 * | `crashed_create_gone`         | absent                      | live, pending create contact    | not owned, pending   | removal per sync.member_removal         |
 * | `not_owned_absent`            | absent, not quarantined     | live, third id, in an owned dept | not owned           | warning not_owned_absent; left alone    |
 * | `stays_in_deleted_department` | any row that left it there  | in a department being deleted   | any                  | listed as staying (the delete waits or is refused) |
 *
 * A member every row kept where it is, in a department this plan deletes, is listed in `staying` (order.ts keeps that
 * department). Around the table, as before: the dated lifecycle rules (lifecycle/: `scheduled` not created yet,
 * `ended` removed or suspended) run before it on the desired members; the policy (`withheld`) and the trust filters
 * (trust/: grace hold, shrink and scope guards) run after it on its changes.
 */
import type { DesiredMember, LifecycleEvent } from '../../domain/index.js';
import type { DiffContext } from '../context.js';
import { lifecycleOf, type LifecycleOptions } from '../lifecycle/index.js';
import { ABSENT_ROWS, classifyLeftover, classifyOwnedAbsent } from './absent-rows.js';
import { memberKey } from './member-index.js';
import { classifyPresent, PRESENT_ROWS } from './present-rows.js';
import type { MemberDiff, MemberDiffInput, MemberEnv, MemberIndex, MemberResult, MemberTable, UnchangedRule } from './types.js';
import { newMemberResult } from './types.js';

export type { MemberDiff, MemberDiffInput, MemberSource, MemberTable, UnchangedRule } from './types.js';
export { NOT_OWNED_ABSENT } from './types.js';
export { listMembers, listMemberTable } from './list-table.js';

/** The dated lifecycle of one planning: its options, the run's time, and the events it records. */
export interface MemberLifecycle {
  opts: LifecycleOptions;
  now: number;
  events: LifecycleEvent[];
}

/**
 * Diffs the desired members against the mirror through the table: each window of desired members (the lifecycle
 * rules first), then the owned members no desired member claimed, then every live member left over.
 */
export function diffMembers(table: MemberTable, provided: boolean, ctx: DiffContext, input: MemberDiffInput, lifecycle?: MemberLifecycle, unchanged?: UnchangedRule): MemberDiff {
  const out = newMemberResult(ctx.warnings, table.claims());
  const env: MemberEnv = { ctx, input, index: table.lookups(), removalMode: ctx.opts.memberRemoval, adoptBy: ctx.opts.adopt.members, provided };
  // Source ids the lifecycle holds back (a future hire): not desired yet, for the absent rows as for the present.
  const held = new Set<string>();
  for (const window of table.windows(unchanged)) {
    env.index = window.index;
    for (const d of window.members) presentRow(d, env, out, held, lifecycle);
  }
  env.index = withoutHeld(table.lookups(), held);
  for (const [thirdId, account] of table.ownedAbsent(held)) {
    const row = classifyOwnedAbsent(thirdId, account, env, out);
    if (row) ABSENT_ROWS[row.row](row, env, out);
  }
  for (const m of table.leftovers(input.removing, held)) {
    const row = classifyLeftover(m, env, out);
    if (row) ABSENT_ROWS[row.row](row, env, out);
  }
  return { upserts: out.upserts, removals: out.removals, ownedCount: table.ownedCount(), leaving: out.leaving, staying: out.staying };
}

/** One desired member through the lifecycle rules, then the first present row that matches. */
function presentRow(d0: DesiredMember, env: MemberEnv, out: MemberResult, held: Set<string>, lifecycle: MemberLifecycle | undefined): void {
  let d: DesiredMember | null = d0;
  const life = lifecycle ? lifecycleOf(d0, { has: (third) => env.index.liveByThird.get(third) !== undefined }, lifecycle.opts, lifecycle.now) : undefined;
  if (life) {
    lifecycle!.events.push(life.event);
    d = life.member;
  }
  if (d === null) {
    held.add(d0.source_id);
    return;
  }
  const row = classifyPresent(memberKey(d, env.index), env, out);
  PRESENT_ROWS[row.row](row, env, out);
}

/** The lookups with the source ids the lifecycle held back taken out of the desired ones. */
function withoutHeld(index: MemberIndex, held: ReadonlySet<string>): MemberIndex {
  if (held.size === 0) return index;
  return { ...index, desiredIds: () => ({ has: (id: string) => !held.has(id) && index.desiredIds().has(id) }) };
}
