/**
 * The members of every source, settled into the run's desired members where they are staged (issue 42): the
 * questions go to the stage (the state DB's tables in a run, a list otherwise), the rules are here. In order:
 *
 * | step                 | members                                                     | outcome                                      |
 * |----------------------|-------------------------------------------------------------|----------------------------------------------|
 * | repeated in a source | one source gave the id more than once                       | every copy quarantined `duplicate_id`        |
 * | quarantined elsewhere| a source quarantined the id (several sources)               | `quarantined_in_other_source`; one source: dropped |
 * | merge                | several sources gave the id                                 | one record: per field the first source in config order with a value, unless a later one is authoritative |
 * | name                 | no display name after the merge                             | `empty_name`                                 |
 * | contact, department  | neither e-mail nor phone; a department not in the source    | `no_contact`; `unknown_department` / `department_quarantined` |
 * | shared contact       | members not `left` sharing an e-mail or a phone             | each quarantined `duplicate_email` / `duplicate_phone` |
 */
import type { DesiredMembers, MemberStage, QuarantineEntry, SourceMember, SourceWarning, StagedMember } from '../domain/desired.js';

/** One source as the settling sees it: its name and the member fields it is authoritative for, by config order. */
export interface StagedSource {
  source: string;
  /** Member fields this source is authoritative for (`authoritative_fields` without the `members.` prefix). */
  authoritative: ReadonlySet<string>;
}

const isEmpty = (v: unknown): boolean => v === undefined || v === '';

function entry(m: SourceMember, reason: string, message: string): QuarantineEntry {
  return { source: m.origin?.source ?? '', entity: 'members', source_id: m.source_id, location: m.origin?.location ?? '', reason, message };
}

/** Steps one to four of the table: repeats, quarantine elsewhere, the merge, the name. Entries go to `quarantine`. */
export function mergeStagedMembers(stage: MemberStage, sources: readonly StagedSource[], quarantine: QuarantineEntry[]): void {
  dropRepeated(stage, quarantine);
  dropQuarantinedElsewhere(stage, sources, quarantine);
  if (sources.length > 1) for (const group of stage.sharedIds()) mergeGroup(stage, group, sources);
  // Asked of the stage, not read member by member: a million named members never reach the heap for it.
  const unnamed = stage.unnamed();
  for (const s of unnamed) quarantine.push(entry(s.member, 'empty_name', 'display_name is empty'));
  stage.drop(unnamed.map((s) => s.seq));
}

/** Every copy of an id one source gave more than once: which copy is right cannot be known. */
function dropRepeated(stage: MemberStage, quarantine: QuarantineEntry[]): void {
  const copies: { s: StagedMember; locations: string[] }[] = [];
  for (const group of stage.repeatedInSource()) {
    const locations = group.map((s) => s.member.origin?.location ?? '');
    for (const s of group) copies.push({ s, locations });
  }
  copies.sort((a, b) => a.s.seq - b.s.seq);
  for (const { s, locations } of copies) {
    const at = s.member.origin?.location ?? '';
    const others = locations.filter((l) => l !== at);
    quarantine.push(entry(s.member, 'duplicate_id', `source id "${s.member.source_id}" appears ${locations.length} times in this source (also at ${others.join(', ')})`));
  }
  stage.drop(copies.map((c) => c.s.seq));
}

/** An id a source quarantined is quarantined in every source: a partial picture of a record is never synced. */
function dropQuarantinedElsewhere(stage: MemberStage, sources: readonly StagedSource[], quarantine: QuarantineEntry[]): void {
  // The first source in config order that quarantined the id names it.
  const quarantinedIn = new Map<string, string>();
  for (const { source } of sources) for (const q of quarantine) if (q.source === source && q.entity === 'members' && q.source_id !== undefined && !quarantinedIn.has(q.source_id)) quarantinedIn.set(q.source_id, source);
  if (quarantinedIn.size === 0) return;
  const held = stage.withIds(new Set(quarantinedIn.keys()));
  for (const s of held) {
    const badIn = quarantinedIn.get(s.member.source_id)!;
    const source = sources[s.rank]!.source;
    if (sources.length > 1 && badIn !== source) {
      quarantine.push({ source, entity: 'members', source_id: s.member.source_id, location: s.member.origin?.location ?? '', reason: 'quarantined_in_other_source', message: `the same record is quarantined in source "${badIn}"` });
    }
  }
  stage.drop(held.map((s) => s.seq));
}

/** The copies of one id from several sources, merged into the first: per field the first value, or an authoritative one. */
function mergeGroup(stage: MemberStage, group: readonly StagedMember[], sources: readonly StagedSource[]): void {
  const first = group[0]!;
  const record: Record<string, unknown> = { ...first.member };
  const from = new Map<string, [string, boolean]>();
  const firstAuth = sources[first.rank]!.authoritative;
  for (const [k, v] of Object.entries(first.member)) if (k !== 'origin' && !isEmpty(v)) from.set(k, [sources[first.rank]!.source, firstAuth.has(k)]);
  for (const copy of group.slice(1)) {
    const { source, authoritative } = sources[copy.rank]!;
    for (const [k, v] of Object.entries(copy.member)) {
      if (k === 'origin' || k === 'source_id' || isEmpty(v)) continue;
      const cur = from.get(k);
      if (isEmpty(record[k]) || (authoritative.has(k) && !cur?.[1])) {
        record[k] = v;
        from.set(k, [source, authoritative.has(k)]);
      }
    }
  }
  const origin = first.member.origin;
  if (origin) record.origin = { ...origin, fieldSources: Object.fromEntries([...from].filter(([k]) => k !== 'source_id').map(([k, [s]]) => [k, s])) };
  stage.replace(first.seq, record as unknown as SourceMember);
  stage.drop(group.slice(1).map((s) => s.seq));
}

/** The department side of the checks: the departments that passed, those quarantined, and whether any source gives them. */
export interface DepartmentCheck {
  valid: ReadonlySet<string>;
  quarantined: ReadonlySet<string>;
  /** False when no source provides departments: a member's department is then not checked here. */
  checked: boolean;
}

/**
 * Steps five and six: each member needs a contact and a department that exists; members not `left` must not share
 * an e-mail or a phone (one platform account per contact, and which of them is right is unknown). Returns the
 * desired members; the warnings of members not synced are dropped from `warnings`.
 */
export function checkStagedMembers(stage: MemberStage, departments: DepartmentCheck, quarantine: QuarantineEntry[], warnings: SourceWarning[]): { members: DesiredMembers; warnings: SourceWarning[] } {
  const failed: number[] = [];
  for (const { seq, member: m } of stage.recordCheckCandidates(departments.checked ? departments.valid : undefined)) {
    const problem = recordProblem(m, departments);
    if (!problem) continue;
    quarantine.push(problem);
    failed.push(seq);
  }
  stage.drop(failed);
  dropSharedContacts(stage, quarantine);
  const members = stage.members();
  return { members, warnings: settleWarnings(warnings, members, quarantine) };
}

/** The first check a member fails (no contact, then its department), or undefined. */
function recordProblem(m: SourceMember, departments: DepartmentCheck): QuarantineEntry | undefined {
  if (!m.email && !m.phone) return entry(m, 'no_contact', 'member has neither e-mail nor phone (the platform needs one)');
  const d = m.department_source_id;
  if (d === undefined || !departments.checked || departments.valid.has(d)) return undefined;
  if (departments.quarantined.has(d)) return entry(m, 'department_quarantined', `department "${d}" is quarantined`);
  return entry(m, 'unknown_department', `department "${d}" does not exist`);
}

/** Every member of a shared contact, once (a member sharing both its e-mail and its phone is reported for the first). */
function dropSharedContacts(stage: MemberStage, quarantine: QuarantineEntry[]): void {
  // The order the members were read in: a group by the first of its members, an e-mail before a phone.
  const groups = [...stage.sharedContacts()].sort((a, b) => a.members[0]!.seq - b.members[0]!.seq || (a.field === b.field ? 0 : a.field === 'email' ? -1 : 1));
  const dropped = new Set<number>();
  for (const g of groups) {
    const isEmail = g.field === 'email';
    for (const s of g.members) {
      if (dropped.has(s.seq)) continue;
      dropped.add(s.seq);
      const others = g.members.filter((o) => o.seq !== s.seq).map((o) => `"${o.member.source_id}"`);
      const shown = others.slice(0, 3).join(', ') + (others.length > 3 ? ` and ${others.length - 3} more` : '');
      quarantine.push(entry(s.member, isEmail ? 'duplicate_email' : 'duplicate_phone', `${isEmail ? 'e-mail' : 'phone'} "${g.value}" is also used by member ${shown}`));
    }
  }
  stage.drop([...dropped]);
}

/**
 * The warnings of the run: only of members that are synced. A member whose phone was dropped and who has no e-mail
 * either is quarantined as `no_contact`; its entry then names the dropped phone instead of a warning.
 */
function settleWarnings(all: SourceWarning[], members: DesiredMembers, quarantine: QuarantineEntry[]): SourceWarning[] {
  if (all.length === 0) return all;
  const dropped = new Map<string, SourceWarning[]>();
  for (const w of all) if (w.code === 'invalid_phone_dropped') dropped.set(w.source_id, [...(dropped.get(w.source_id) ?? []), w]);
  for (const q of quarantine) {
    const ws = q.entity === 'members' && q.reason === 'no_contact' && q.source_id !== undefined ? dropped.get(q.source_id) : undefined;
    if (ws) q.message = `member has neither e-mail nor a valid phone (the platform needs one): ${ws.map((w) => w.problem).join('; ')}`;
  }
  return all.filter((w) => members.get(w.source_id) !== undefined);
}
