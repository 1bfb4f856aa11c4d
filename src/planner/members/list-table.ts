/**
 * The member table over lists in the heap (issue 42): the desired members, the mirror's members and the ownership
 * records as arrays and maps, one window of every desired member. Tests and small inputs plan through it; a run
 * plans through the state DB's table (src/mirror/member-table.ts), which answers the same questions from SQLite.
 */
import type { DesiredMember, PlatformMember } from '../../domain/index.js';
import { normEmail, normPhone } from '../normalise.js';
import type { ContactIndex, MemberFinder, MemberIndex, MemberSource, MemberTable } from './types.js';

/** The member side of a planner snapshot from lists: the platform's members and this sync's ownership records. */
export function listMembers(all: readonly PlatformMember[], ownedMembers: ReadonlyMap<string, string> = new Map()): MemberSource {
  return { table: (desired) => listMemberTable([...desired], all, ownedMembers), finder: () => listFinder(all, ownedMembers) };
}

/** The finder over lists: the platform's members in their order, the ownership records. */
export function listFinder(all: readonly PlatformMember[], ownedMembers: ReadonlyMap<string, string>): MemberFinder {
  const ownedByAccount = new Map([...ownedMembers].map(([t, a]) => [a, t]));
  const live = all.filter((m) => m.status !== 'left');
  const sourceIdOf = (m: PlatformMember): string => ownedByAccount.get(m.account_id) ?? m.third_user_id;
  return {
    liveByEmail: (email) => live.filter((m) => m.email !== '' && normEmail(m.email) === email),
    liveBySourceId: (sourceId) => live.filter((m) => sourceIdOf(m) === sourceId),
    accountOf: (sourceId) => ownedMembers.get(sourceId) ?? live.find((m) => m.third_user_id === sourceId)?.account_id,
    sourceIdOf,
  };
}

/** The table of `desired` against `all` (the mirror, in its order) and `ownedMembers` (third id -> account). */
export function listMemberTable(desired: readonly DesiredMember[], all: readonly PlatformMember[], ownedMembers: ReadonlyMap<string, string>): MemberTable {
  const index = listIndex(desired, all, ownedMembers);
  const live = index.liveByAccount as ReadonlyMap<string, PlatformMember>;
  return {
    windows: () => [{ members: desired, index }],
    lookups: () => index,
    claims: () => ({ taken: new Set<string>(), handled: new Set<string>() }),
    ownedAbsent: () => ownedMembers,
    leftovers: () => live.values(),
    ownedCount: () => {
      let n = 0;
      for (const m of live.values()) if (index.ownedAccounts.has(m.account_id)) n += 1;
      return n;
    },
  };
}

function listIndex(desired: readonly DesiredMember[], all: readonly PlatformMember[], ownedMembers: ReadonlyMap<string, string>): MemberIndex {
  const ownedAccounts = new Set(ownedMembers.values());
  const liveByThird = new Map<string, PlatformMember>();
  const liveByAccount = new Map<string, PlatformMember>();
  for (const m of all) {
    if (m.status === 'left') continue;
    liveByAccount.set(m.account_id, m);
    if (m.third_user_id !== '') liveByThird.set(m.third_user_id, m);
  }
  let desiredIds: Set<string> | undefined;
  let contacts: ContactIndex | undefined;
  return {
    liveByThird,
    liveByAccount,
    ownedMembers,
    ownedAccounts,
    desiredIds: () => (desiredIds ??= new Set(desired.map((d) => d.source_id))),
    contacts: () => (contacts ??= contactIndex(liveByAccount.values())),
  };
}

/** Live members by normalised e-mail and phone (the last in order wins a shared one). */
export function contactIndex(live: Iterable<PlatformMember>): ContactIndex {
  const byEmail = new Map<string, PlatformMember>();
  const byPhone = new Map<string, PlatformMember>();
  for (const m of live) {
    if (m.email !== '') byEmail.set(normEmail(m.email), m);
    if (m.phone !== '') byPhone.set(normPhone(m.phone), m);
  }
  return { byEmail, byPhone };
}
