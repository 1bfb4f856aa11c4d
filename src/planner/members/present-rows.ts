/** The rows of the member table for a member in the source: which one matches, and one handler per row. */
import { contactMatch, type MemberKey } from './member-index.js';
import { adoptMatch, isCrashedCreate } from './member-fields.js';
import type { PlatformMember } from '../../domain/index.js';
import { normPhone } from '../normalise.js';
import { createMember } from './create-member.js';
import { removeMember } from './remove-member.js';
import { updateMember } from './update-member.js';
import type { MemberEnv, MemberResult, MemberRow, PresentRowName } from './types.js';

/** The first row of the table that matches a desired member (see index.ts); reads which accounts are taken so far. */
export function classifyPresent(k: MemberKey, env: MemberEnv, out: Pick<MemberResult, 'taken'>): MemberRow {
  const { desired: d, live } = k;
  if (d.status === 'left') return live && k.owned ? rowOf('left_in_source', k, live) : rowOf('left_not_ours', k);
  if (live) {
    if (k.owned) return rowOf('update_owned', k, live);
    if (isCrashedCreate(live, env.ctx)) return rowOf('adopt_crashed_create', k, live);
    const by = adoptMatch(d, live, env.adoptBy);
    return by ? rowOf('adopt_by_config', k, live, by) : rowOf('conflict', k, live);
  }
  const other = contactMatch(d, env.index);
  if (other && !out.taken.has(other.account_id)) {
    if (env.index.ownedAccounts.has(other.account_id)) return rowOf('rekey_owned', k, other);
    const by = adoptMatch(d, other, env.adoptBy);
    return by ? rowOf('adopt_by_contact', k, other, by) : rowOf('contact_conflict', k, other);
  }
  return rowOf('create', k);
}

function rowOf(row: PresentRowName, k: MemberKey, live?: PlatformMember, by?: 'email' | 'phone'): MemberRow {
  return { row, desired: k.desired, live, ownedAccount: k.ownedAccount, by };
}

/** Status left in the source, live and owned: taken out (sync.member_removal). */
export function leftInSource({ desired: d, live }: MemberRow, env: MemberEnv, out: MemberResult): void {
  out.taken.add(live!.account_id);
  removeMember(live!, d.source_id, 'status left in the source', env, out);
}

/** Same third id (or the owned account), owned; or owned under an old third id found by contact (re-keyed). */
export function updateOwned({ desired: d, live }: MemberRow, env: MemberEnv, out: MemberResult): void {
  updateMember(d, live!, undefined, env, out);
}

/** Same third id, not owned, a pending create of this sync: its own crashed create, adopted. */
export function adoptCrashedCreate({ desired: d, live }: MemberRow, env: MemberEnv, out: MemberResult): void {
  updateMember(d, live!, 'crashed_create', env, out);
}

/** Same third id or contact, not owned, sync.adopt.members matches: adopted (and patched). */
export function adoptByConfig({ desired: d, live, by }: MemberRow, env: MemberEnv, out: MemberResult): void {
  updateMember(d, live!, by, env, out);
}

/** Same third id, not owned, no adoption: blocked, left alone. */
export function sameIdConflict({ desired: d, live }: MemberRow, _env: MemberEnv, out: MemberResult): void {
  out.taken.add(live!.account_id);
  out.warnings.push({
    code: 'not_owned_conflict',
    entity: 'members',
    thirdId: d.source_id,
    platformId: live!.account_id,
    blocks: 'not_owned_conflict',
    message: `member "${live!.display_name}" with third_user_id ${d.source_id} exists but is not owned by this sync (enable sync.adopt.members: [email] or [phone] to take it over); left alone`,
  });
}

/** Same phone or e-mail under another third id, not owned, no adoption: blocked, not created. */
export function contactConflict({ desired: d, live }: MemberRow, _env: MemberEnv, out: MemberResult): void {
  const other = live!;
  out.taken.add(other.account_id);
  const samePhone = d.phone && other.phone && normPhone(d.phone) === normPhone(other.phone);
  out.warnings.push({
    code: 'not_owned_conflict',
    entity: 'members',
    thirdId: d.source_id,
    platformId: other.account_id,
    blocks: 'contact_not_owned',
    message: `member ${d.source_id}: "${other.display_name}" with the same ${samePhone ? 'phone' : 'e-mail'} is already in the tenant and not owned by this sync (enable sync.adopt.members to take it over); not created`,
  });
}

/** One handler per row of the table for a member in the source. */
export const PRESENT_ROWS: Record<PresentRowName, (row: MemberRow, env: MemberEnv, out: MemberResult) => void> = {
  left_in_source: leftInSource,
  left_not_ours: () => undefined,
  update_owned: updateOwned,
  adopt_crashed_create: adoptCrashedCreate,
  adopt_by_config: adoptByConfig,
  conflict: sameIdConflict,
  rekey_owned: updateOwned,
  adopt_by_contact: adoptByConfig,
  contact_conflict: contactConflict,
  create: createMember,
};
