/** The key step of the member table: source record, mirror record and ownership side by side per source id. */
import type { DesiredMember, PlatformMember } from '../../domain/index.js';
import { normEmail, normPhone } from '../normalise.js';
import type { MemberIndex } from './types.js';

/** A desired member with the live record that holds its source id and whether this sync owns that record. */
export interface MemberKey {
  desired: DesiredMember;
  /** The live member with this third id, or the live account the state DB records for it (when they differ). */
  live: PlatformMember | undefined;
  /** True when `live` is owned by this sync (state DB). */
  owned: boolean;
  /** The account the state DB records for this source id, live or left. */
  ownedAccount: string | undefined;
}

/** The key of one desired member: its live record under its source id (or its owned account) and ownership. */
export function memberKey(d: DesiredMember, index: MemberIndex): MemberKey {
  const ownedAccount = index.ownedMembers.get(d.source_id);
  let live = index.liveByThird.get(d.source_id);
  if (ownedAccount !== undefined && live?.account_id !== ownedAccount) {
    const byAccount = index.liveByAccount.get(ownedAccount);
    if (byAccount) live = byAccount;
  }
  return { desired: d, live, owned: live !== undefined && index.ownedAccounts.has(live.account_id), ownedAccount };
}

/** A live member under another third id with the same phone (first) or e-mail as a desired member. */
export function contactMatch(d: DesiredMember, index: MemberIndex): PlatformMember | undefined {
  if (!d.phone && !d.email) return undefined;
  const byPhone = d.phone ? index.contacts().byPhone.get(normPhone(d.phone)) : undefined;
  return byPhone ?? (d.email ? index.contacts().byEmail.get(normEmail(d.email)) : undefined);
}
