/**
 * The normalised desired state that every source connector yields (HR truth).
 * Source ids become the platform's third_department_id, third_position_id and third_user_id.
 */
import type { EntityKind } from './entities.js';

/** Where a record came from, for quarantine reports and `orgsync explain`. */
export interface RecordOrigin {
  /** The source's name in the config. */
  source: string;
  /** file:line, a DN, or a JSON path. */
  location: string;
  /** For merged records: which source each field's value came from. */
  fieldSources?: Record<string, string>;
}

export interface DesiredDepartment {
  source_id: string;
  name: string;
  /** Absent or empty: top level (under the sync root). */
  parent_source_id?: string;
  sort_order?: number;
  origin?: RecordOrigin;
}

export interface DesiredPosition {
  source_id: string;
  name: string;
  description?: string;
  sort_order?: number;
  origin?: RecordOrigin;
}

export type DesiredMemberStatus = 'active' | 'suspended' | 'left';

export interface DesiredMember {
  source_id: string;
  display_name: string;
  /** Lower-cased. */
  email?: string;
  /** E.164. */
  phone?: string;
  title?: string;
  department_source_id?: string;
  status: DesiredMemberStatus;
  /** The first working day as the source gave it, and its instant (ms; a date is its midnight in `timezone:`). */
  start_date?: string;
  start_at?: number;
  /** The last day as the source gave it, and the instant from which the member is gone (ms). */
  end_date?: string;
  end_at?: number;
  origin?: RecordOrigin;
}

/** A record set aside with a reason a person can act on. */
export interface QuarantineEntry {
  source: string;
  entity: EntityKind;
  /** The record's source id, when it has one. */
  source_id?: string;
  /** file:line, DN or JSON path. */
  location: string;
  /** A short stable reason code, e.g. `duplicate_id`, `unknown_parent`, `invalid_email`. */
  reason: string;
  /** The human sentence. */
  message: string;
}

/**
 * A value a source gave that orgsync dropped while keeping the record (issue 15: an invalid phone beside a valid
 * e-mail, under `phone_policy: drop`). Reported by `sources check`, counted in plan and run summaries.
 */
export interface SourceWarning {
  source: string;
  entity: EntityKind;
  source_id: string;
  /** file:line, DN or JSON path. */
  location: string;
  /** A short stable code, e.g. `invalid_phone_dropped`. */
  code: string;
  /** The human sentence. */
  message: string;
  /** What was wrong with the dropped value, e.g. `invalid phone "12345"`. */
  problem: string;
}

/**
 * The desired members of a run (issue 42): staged in the state DB and read a window at a time in source order
 * (src/mirror/member-stage.ts), or held in a list (memberList: tests and small inputs). Iterating reads them all in
 * source order; a reader that keeps what it reads keeps the whole organisation in the heap, so the run's stages
 * keep only what they need of each.
 */
export interface DesiredMembers extends Iterable<DesiredMember> {
  /** How many members there are. */
  readonly length: number;
  /** The member with this source id, if any. */
  get(sourceId: string): DesiredMember | undefined;
  /** Every member in source id order (a saved plan's source hash reads them so). */
  bySourceId(): Iterable<DesiredMember>;
  /**
   * How many members each source gave, by outcome (a report's counts, without reading the members one by one):
   * `outcomes` names some members' outcome as [source id, outcome, rank] (of two for one member the higher rank
   * counts, of equal ranks the first); every other member counts as `left` or `present` by its status. Groups in the
   * order their first member was read.
   */
  tally(outcomes: Iterable<readonly [string, string, number]>): MemberTally[];
}

/** One group of DesiredMembers.tally. */
export interface MemberTally {
  source: string;
  outcome: string;
  count: number;
}

/** The outcome of each member `outcomes` names, the higher rank winning (the first of equal ranks). */
export function rankedOutcomes(outcomes: Iterable<readonly [string, string, number]>): Map<string, readonly [string, number]> {
  const best = new Map<string, readonly [string, number]>();
  for (const [id, outcome, rank] of outcomes) {
    const held = best.get(id);
    if (held === undefined || rank > held[1]) best.set(id, [outcome, rank]);
  }
  return best;
}

/** Desired members held in a list, in its order (two lists of equal members are equal values). */
export class MemberList implements DesiredMembers {
  #byId: Map<string, DesiredMember> | undefined;

  constructor(readonly members: readonly DesiredMember[]) {}

  get length(): number {
    return this.members.length;
  }

  [Symbol.iterator](): Iterator<DesiredMember> {
    return this.members[Symbol.iterator]();
  }

  get(sourceId: string): DesiredMember | undefined {
    return (this.#byId ??= new Map(this.members.map((m) => [m.source_id, m]))).get(sourceId);
  }

  bySourceId(): DesiredMember[] {
    return [...this.members].sort((a, b) => (a.source_id < b.source_id ? -1 : a.source_id > b.source_id ? 1 : 0));
  }

  tally(outcomes: Iterable<readonly [string, string, number]>): MemberTally[] {
    const best = rankedOutcomes(outcomes);
    const groups = new Map<string, MemberTally>();
    for (const m of this.members) {
      const source = m.origin?.source ?? '';
      const outcome = best.get(m.source_id)?.[0] ?? (m.status === 'left' ? 'left' : 'present');
      const key = `${source}\u0000${outcome}`;
      const g = groups.get(key);
      if (g) g.count += 1;
      else groups.set(key, { source, outcome, count: 1 });
    }
    return [...groups.values()];
  }
}

/** Desired members held in a list, in its order. */
export function memberList(members: readonly DesiredMember[]): DesiredMembers {
  return new MemberList(members);
}

/** The merged, validated desired state of one run. */
export interface DesiredState {
  departments: DesiredDepartment[];
  positions: DesiredPosition[];
  members: DesiredMembers;
  quarantine: QuarantineEntry[];
  /** Values dropped from records that were kept (absent: none). */
  warnings?: SourceWarning[];
  /** Per entity: true when at least one configured source provides that entity (an unprovided entity is never diffed for removals). */
  provided: Record<EntityKind, boolean>;
  /** Records each source left out by its include/exclude rules (absent: none), so plans account for them (issue 32). */
  excluded?: ({ source: string } & Record<EntityKind, number>)[];
}

/** A member as one source gave it, before the merge: status undefined when the source does not say. */
export type SourceMember = Omit<DesiredMember, 'status'> & { status?: DesiredMemberStatus };

/** One staged member: its place in staging order, its source's place in config order, the record. */
export interface StagedMember {
  seq: number;
  rank: number;
  member: SourceMember;
}

/** Members sharing one contact value (not left), in staging order. */
export interface SharedContact {
  field: 'email' | 'phone';
  value: string;
  members: StagedMember[];
}

/**
 * Where a run's source members wait between the read and the plan (issue 42): the state DB's temporary tables for a
 * run (src/mirror/member-stage.ts), so a million members cost the heap a window at a time; a list for tests and
 * small reads (src/desired/list-stage.ts). desired/settle-members.ts merges and checks them through these questions;
 * each source's members are staged in config order, each source's in the order it read them.
 */
export interface MemberStage {
  /** Stages a member of the source at `rank` (its place in config order). */
  add(rank: number, member: SourceMember): void;
  /** How many members are staged. */
  count(): number;
  /** Source ids one source staged more than once: every copy, a group per id, in staging order. */
  repeatedInSource(): Iterable<StagedMember[]>;
  /** The staged copies of these source ids, in staging order. */
  withIds(ids: ReadonlySet<string>): StagedMember[];
  /** Source ids several sources staged: a group per id (its copies in staging order), groups in staging order. */
  sharedIds(): Iterable<StagedMember[]>;
  /** Every staged member in staging order, a window at a time (rows dropped meanwhile are not read again). */
  windows(): Iterable<StagedMember[]>;
  /** Members without a display name, in staging order. */
  unnamed(): StagedMember[];
  /**
   * Members a record check may fail, in staging order: those with neither e-mail nor phone, and (`departments` given)
   * those whose department id is not among `departments`. A superset: the checks themselves decide.
   */
  recordCheckCandidates(departments: ReadonlySet<string> | undefined): StagedMember[];
  /** Members not `left` that share an e-mail or a phone, a group per value. */
  sharedContacts(): Iterable<SharedContact>;
  /** Takes staged members out. */
  drop(seqs: readonly number[]): void;
  /** Puts `member` in place of the staged member `seq` (a merged record). */
  replace(seq: number, member: SourceMember): void;
  /** The staged members as the run's desired members, in staging order (call once the checks are done). */
  members(): DesiredMembers;
}
