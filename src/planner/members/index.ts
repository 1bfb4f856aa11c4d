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
import type { DesiredMember, PlatformMember } from '../../domain/index.js';
import type { DiffContext } from '../context.js';
import { ABSENT_ROWS, classifyLeftover, classifyOwnedAbsent } from './absent-rows.js';
import { buildMemberIndex, memberKey } from './member-index.js';
import { classifyPresent, PRESENT_ROWS } from './present-rows.js';
import { type MemberDiff, type MemberDiffInput, type MemberEnv, newMemberResult } from './types.js';

export type { MemberDiff, MemberDiffInput } from './types.js';
export { NOT_OWNED_ABSENT } from './types.js';

/** Diffs desired members against the mirror: the index, then each key through the table. */
export function diffMembers(desired: readonly DesiredMember[], all: readonly PlatformMember[], ownedMembers: ReadonlyMap<string, string>, provided: boolean, ctx: DiffContext, input: MemberDiffInput): MemberDiff {
  const index = buildMemberIndex(desired, all, ownedMembers);
  const env: MemberEnv = { ctx, input, index, removalMode: ctx.opts.memberRemoval, adoptBy: ctx.opts.adopt.members, provided };
  const out = newMemberResult(ctx.warnings);
  for (const d of desired) {
    const row = classifyPresent(memberKey(d, index), env, out);
    PRESENT_ROWS[row.row](row, env, out);
  }
  for (const [thirdId, account] of ownedMembers) {
    const row = classifyOwnedAbsent(thirdId, account, env, out);
    if (row) ABSENT_ROWS[row.row](row, env, out);
  }
  for (const m of index.liveByAccount.values()) {
    const row = classifyLeftover(m, env, out);
    if (row) ABSENT_ROWS[row.row](row, env, out);
  }
  return { upserts: out.upserts, removals: out.removals, ownedCount: index.ownedCount, leaving: out.leaving, staying: out.staying };
}
