/** The index step of the member table: source record, mirror record and ownership side by side per source id. */
import type { DesiredMember, PlatformMember } from '../../domain/index.js';
import { normEmail, normPhone } from '../normalise.js';
import type { ContactIndex, MemberIndex } from './types.js';

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

/** Indexes the mirror's live members and this sync's ownership records. */
export function buildMemberIndex(desired: readonly DesiredMember[], all: readonly PlatformMember[], ownedMembers: ReadonlyMap<string, string>): MemberIndex {
  const ownedAccounts = new Set(ownedMembers.values());
  const liveByThird = new Map<string, PlatformMember>();
  const liveByAccount = new Map<string, PlatformMember>();
  let ownedCount = 0;
  for (const m of all) {
    if (m.status === 'left') continue;
    liveByAccount.set(m.account_id, m);
    if (m.third_user_id !== '') liveByThird.set(m.third_user_id, m);
    if (ownedAccounts.has(m.account_id)) ownedCount += 1;
  }
  // Asked only about live or owned members: an empty tenant (a first import of a million) never builds it.
  let desiredIds: Set<string> | undefined;
  const desiredIdSet = (): ReadonlySet<string> => {
    if (desiredIds === undefined) {
      desiredIds = new Set<string>();
      for (const d of desired) desiredIds.add(d.source_id);
    }
    return desiredIds;
  };
  let contacts: ContactIndex | undefined;
  return { liveByThird, liveByAccount, ownedMembers, ownedAccounts, ownedCount, desiredIds: desiredIdSet, contacts: () => (contacts ??= contactIndex(liveByAccount)) };
}

function contactIndex(liveByAccount: ReadonlyMap<string, PlatformMember>): ContactIndex {
  const out: ContactIndex = { byEmail: new Map(), byPhone: new Map() };
  for (const m of liveByAccount.values()) {
    if (m.email !== '') out.byEmail.set(normEmail(m.email), m);
    if (m.phone !== '') out.byPhone.set(normPhone(m.phone), m);
  }
  return out;
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
