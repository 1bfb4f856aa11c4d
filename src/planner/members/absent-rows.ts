/** The rows of the member table for live members no desired member claimed: which one matches, one handler per row. */
import type { PlatformMember } from '../../domain/index.js';
import { isQuarantined, quarantinedKeptWarning } from '../context.js';
import { currentDept, isCrashedCreate } from './member-fields.js';
import { removeMember } from './remove-member.js';
import { type MemberEnv, type MemberResult, NOT_OWNED_ABSENT, pushTo } from './types.js';

/** The rows of the table for a member absent from the source, in the order they are tried. */
export type AbsentRowName = 'kept_not_provided' | 'kept_quarantined' | 'gone' | 'crashed_create_gone' | 'not_owned_absent' | 'stays_in_deleted_department';

/** One row of the table for a live member absent from the source. */
export interface AbsentRow {
  row: AbsentRowName;
  live: PlatformMember;
  /** Its source id: the state DB's for an owned member, the platform's third_user_id otherwise. */
  thirdId: string;
}

/** The row of an owned member (state DB: thirdId -> account) that no desired member claimed, if any. */
export function classifyOwnedAbsent(thirdId: string, account: string, env: MemberEnv, out: Pick<MemberResult, 'taken'>): AbsentRow | undefined {
  if (env.index.desiredIds().has(thirdId) || out.taken.has(account)) return undefined;
  const live = env.index.liveByAccount.get(account);
  if (!live) return undefined;
  if (!env.provided) return { row: 'kept_not_provided', live, thirdId };
  if (isQuarantined(env.ctx, 'members', thirdId)) return { row: 'kept_quarantined', live, thirdId };
  return { row: 'gone', live, thirdId };
}

/** The row of any live member once the desired and the owned ones are decided, if any. */
export function classifyLeftover(m: PlatformMember, env: MemberEnv, out: Pick<MemberResult, 'taken' | 'handled'>): AbsentRow | undefined {
  if (out.handled.has(m.account_id)) return undefined;
  const { index, ctx, input } = env;
  const thirdId = m.third_user_id;
  const free = env.provided && !out.taken.has(m.account_id) && !index.ownedAccounts.has(m.account_id) && !index.desiredIds().has(thirdId);
  if (free && (ctx.pending.members?.size ?? 0) > 0 && isCrashedCreate(m, ctx)) return { row: 'crashed_create_gone', live: m, thirdId };
  if (free && input.isOwnedDepartment && thirdId !== '' && !isQuarantined(ctx, 'members', thirdId) && input.isOwnedDepartment(m.department_id)) {
    return { row: 'not_owned_absent', live: m, thirdId };
  }
  const dept = currentDept(m, input);
  return dept !== '' && input.removing.has(dept) ? { row: 'stays_in_deleted_department', live: m, thirdId } : undefined;
}

/** No source provides members this run: nothing is absent; kept where it is. */
export function keptNotProvided({ live, thirdId }: AbsentRow, env: MemberEnv, out: MemberResult): void {
  out.handled.add(live.account_id);
  const dept = currentDept(live, env.input);
  if (dept !== '' && env.input.removing.has(dept)) pushTo(out.staying, dept, `member ${thirdId}`);
}

/** Absent only because its source record is quarantined: kept, with a `quarantined_kept` warning. */
export function keptQuarantined(row: AbsentRow, env: MemberEnv, out: MemberResult): void {
  out.warnings.push(quarantinedKeptWarning('members', row.thirdId, row.live.account_id, row.live.display_name));
  keptNotProvided(row, env, out);
}

/** Owned and gone from the source: removed or suspended (sync.member_removal). */
export function goneFromSource({ live, thirdId }: AbsentRow, env: MemberEnv, out: MemberResult): void {
  out.taken.add(live.account_id);
  removeMember(live, thirdId, 'gone from the source', env, out);
}

/** This sync's crashed create (pending, same contact) of a member the source no longer has: removed like an owned one. */
export function crashedCreateGone({ live, thirdId }: AbsentRow, env: MemberEnv, out: MemberResult): void {
  out.taken.add(live.account_id);
  removeMember(live, thirdId, 'created by this sync in a run that stopped before recording it, and gone from the source', env, out);
}

/**
 * Gone from the sources, live, not owned, with a third id, in a department this sync owns: the kind of member this
 * sync made, but no state vouches for it any more (its state DB was lost, or it was released). Left alone, and said
 * so by name rather than silently kept.
 */
export function notOwnedAbsent(row: AbsentRow, env: MemberEnv, out: MemberResult): void {
  const m = row.live;
  out.warnings.push({
    code: NOT_OWNED_ABSENT,
    entity: 'members',
    thirdId: m.third_user_id,
    platformId: m.account_id,
    message: `member "${m.display_name}" (third_user_id ${m.third_user_id}) is in no source but not owned by this sync (no state vouches for it): left alone; remove it by hand if the person left`,
  });
  staysInDeletedDepartment(row, env, out);
}

/** Left where it is, in a department this plan would delete: that delete cannot succeed (order.ts keeps it). */
export function staysInDeletedDepartment({ live: m }: AbsentRow, env: MemberEnv, out: MemberResult): void {
  const dept = currentDept(m, env.input);
  if (dept === '' || !env.input.removing.has(dept)) return;
  pushTo(out.staying, dept, env.index.ownedAccounts.has(m.account_id) ? `member ${m.third_user_id || m.account_id}` : `member "${m.display_name}" (not owned by this sync)`);
}

/** One handler per row of the table for a member absent from the source. */
export const ABSENT_ROWS: Record<AbsentRowName, (row: AbsentRow, env: MemberEnv, out: MemberResult) => void> = {
  kept_not_provided: keptNotProvided,
  kept_quarantined: keptQuarantined,
  gone: goneFromSource,
  crashed_create_gone: crashedCreateGone,
  not_owned_absent: notOwnedAbsent,
  stays_in_deleted_department: staysInDeletedDepartment,
};
