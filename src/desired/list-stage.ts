/**
 * The member stage as a list in the heap (issue 42): for tests, previews and reads outside a run. A run stages its
 * members in the state DB instead (src/mirror/member-stage.ts), which answers the same questions from SQLite.
 */
import { memberList, type DesiredMember, type DesiredMembers, type MemberStage, type SharedContact, type SourceMember, type StagedMember } from '../domain/desired.js';

/** A stage holding its members in a list. */
export function listStage(): MemberStage {
  let rows: StagedMember[] = [];
  let next = 1;
  const gone = new Set<number>();
  const live = (): StagedMember[] => {
    if (gone.size > 0) {
      rows = rows.filter((s) => !gone.has(s.seq));
      gone.clear();
    }
    return rows;
  };
  const groupsBy = (key: (s: StagedMember) => string | undefined, keep: (group: StagedMember[]) => boolean): StagedMember[][] => {
    const groups = new Map<string, StagedMember[]>();
    for (const s of live()) {
      const k = key(s);
      if (k === undefined) continue;
      const g = groups.get(k);
      if (g) g.push(s);
      else groups.set(k, [s]);
    }
    return [...groups.values()].filter(keep);
  };
  return {
    add: (rank, member) => void rows.push({ seq: next++, rank, member }),
    count: () => live().length,
    repeatedInSource: () => groupsBy((s) => `${s.rank}\u0000${s.member.source_id}`, (g) => g.length > 1),
    withIds: (ids) => live().filter((s) => ids.has(s.member.source_id)),
    sharedIds: () => groupsBy((s) => s.member.source_id, (g) => g.length > 1),
    windows: () => [[...live()]],
    unnamed: () => live().filter((s) => s.member.display_name === ''),
    recordCheckCandidates: (departments) => live().filter((s) => (!s.member.email && !s.member.phone) || (departments !== undefined && s.member.department_source_id !== undefined && !departments.has(s.member.department_source_id))),
    sharedContacts: () => {
      const out: SharedContact[] = [];
      for (const field of ['email', 'phone'] as const) {
        for (const members of groupsBy((s) => (s.member.status === 'left' ? undefined : s.member[field] || undefined), (g) => g.length > 1)) out.push({ field, value: members[0]!.member[field]!, members });
      }
      return out;
    },
    drop: (seqs) => {
      for (const seq of seqs) gone.add(seq);
    },
    replace: (seq, member) => {
      const s = live().find((x) => x.seq === seq);
      if (s) s.member = member;
    },
    members: (): DesiredMembers => memberList(live().map((s) => settled(s.member))),
  };
}

/** A staged member as a desired one: a source that says nothing of its status has it active. */
export function settled(m: SourceMember): DesiredMember {
  if (m.status !== undefined) return m as DesiredMember;
  m.status = 'active';
  return m as DesiredMember;
}
