/**
 * Where every source record went (issue 32): the plan's counts are of changes (a new member suspended in the source
 * is a create and a PATCH), so beside them each record the sources yielded is counted once, as planned (to create,
 * adopt, update, remove), unchanged, or left alone with the reason (status left, scheduled, past end_date, blocked,
 * withheld, quarantined, out of scope). The counts per entity add up to what `sources check` reads: its records, its
 * quarantined ones and those out of scope. Pure: computed from the Plan and the DesiredState it was made from.
 */
import type { Change, DesiredState, EntityKind, Plan } from '../../domain/index.js';
import { blockedRecords, ENTITY_KINDS } from '../../domain/index.js';

/** What the plan does to records (one per record: a create and its follow-up PATCH count as the create). */
export type RecordOutcome = 'create' | 'adopt' | 'update' | 'remove' | 'unchanged';

/** The outcomes in the order lines list them. */
export const RECORD_OUTCOMES: readonly RecordOutcome[] = ['create', 'adopt', 'update', 'remove', 'unchanged'];

/** Records of one source left alone for one reason. */
export interface LeftAlone {
  /** Stable code: `status_left`, `ended`, `scheduled`, `blocked:<reason>`, `withheld:<why>`, `quarantined`, `out_of_scope`. */
  reason: string;
  /** The source's name in the config (empty when unknown). */
  source: string;
  count: number;
}

/** The records of one entity and where they went. */
export interface EntityAccounting {
  /** Every record the sources yielded: planned + unchanged + left alone. */
  total: number;
  outcomes: Record<RecordOutcome, number>;
  leftAlone: LeftAlone[];
}

/** Per entity: every source record, planned or left alone. */
export type RecordAccounting = Record<EntityKind, EntityAccounting>;

/** Change ops by strength: a record's strongest change names its outcome. */
const STRENGTH: Record<string, number> = { update: 1, move: 1, remove: 2, adopt: 3, create: 4 };
const OUTCOME_OF: Record<number, RecordOutcome> = { 1: 'update', 2: 'remove', 3: 'adopt', 4: 'create' };

/** `entity\0thirdId` -> value, for the record lookups below. */
const keyOf = (entity: string, thirdId: string) => `${entity}\u0000${thirdId}`;

/** Why each source record the plan does not change is left alone, when it is (undefined: unchanged). */
function leftAloneIndex(plan: Plan): Map<string, string> {
  const why = new Map<string, string>();
  // First reason wins: a blocked record is blocked whatever else holds for it.
  const set = (k: string, reason: string) => {
    if (!why.has(k)) why.set(k, reason);
  };
  for (const b of blockedRecords(plan)) set(keyOf(b.entity, b.sourceId), `blocked:${b.reason}`);
  for (const w of plan.withheld) if (w.change.thirdId) set(keyOf(w.change.entity, w.change.thirdId), `withheld:${w.why}`);
  for (const e of plan.lifecycle?.ended ?? []) if (e.action === 'not_created') set(keyOf('members', e.thirdId), 'ended');
  for (const e of plan.lifecycle?.scheduled ?? []) set(keyOf('members', e.thirdId), 'scheduled');
  return why;
}

const REASON_ORDER = ['status_left', 'ended', 'scheduled', 'blocked:', 'withheld:', 'quarantined', 'out_of_scope'];
const reasonRank = (reason: string): number => {
  const i = REASON_ORDER.findIndex((r) => (r.endsWith(':') ? reason.startsWith(r) : reason === r));
  return i < 0 ? REASON_ORDER.length : i;
};

/** Per entity, the strongest change of each record by third id. */
function strongestByRecord(changes: readonly Change[]): Record<EntityKind, Map<string, number>> {
  // Keyed by the third id the change holds already: no key string made per change.
  const strongest: Record<EntityKind, Map<string, number>> = { departments: new Map(), positions: new Map(), members: new Map() };
  for (const c of changes) {
    const thirdId = c.thirdId;
    if (!thirdId || c.entity === 'members') continue;
    const byId = strongest[c.entity];
    const s = STRENGTH[c.op] ?? 1;
    if ((byId.get(thirdId) ?? 0) < s) byId.set(thirdId, s);
  }
  return strongest;
}

/** Adds a left-alone count, one entry per entity, reason and source in the order they are met. */
type Leave = (entity: EntityKind, reason: string, source: string, count?: number) => void;

/** Counts the departments or positions (thousands: read one by one) as planned, unchanged or left alone. */
function accountList(entity: 'departments' | 'positions', records: readonly { source_id: string; origin?: { source: string } }[], strength: ReadonlyMap<string, number>, why: ReadonlyMap<string, string>, acc: EntityAccounting, leave: Leave): void {
  for (const r of records) {
    acc.total += 1;
    const s = strength.get(r.source_id);
    if (s !== undefined) {
      acc.outcomes[OUTCOME_OF[s]!] += 1;
      continue;
    }
    const k = keyOf(entity, r.source_id);
    if (why.has(k)) leave(entity, why.get(k)!, r.origin?.source ?? '');
    else acc.outcomes.unchanged += 1;
  }
}

/**
 * Counts the members (a million: counted where they are staged, by DesiredMembers.tally) as planned, unchanged or
 * left alone: a member's strongest change names its outcome; else why it is left alone (blocked, withheld, a dated
 * rule); else its status left, or unchanged.
 */
function accountMembers(desired: DesiredState, changes: readonly Change[], why: ReadonlyMap<string, string>, acc: EntityAccounting, leave: Leave): void {
  function* outcomes(): Generator<readonly [string, string, number]> {
    for (const c of changes) {
      if (c.entity !== 'members' || !c.thirdId) continue;
      const s = STRENGTH[c.op] ?? 1;
      yield [c.thirdId, OUTCOME_OF[s]!, 10 + s];
    }
    const prefix = keyOf('members', '');
    for (const [k, reason] of why) if (k.startsWith(prefix)) yield [k.slice(prefix.length), reason, 1];
  }
  for (const t of desired.members.tally(outcomes())) {
    acc.total += t.count;
    if (t.outcome === 'present') acc.outcomes.unchanged += t.count;
    else if (t.outcome in acc.outcomes) acc.outcomes[t.outcome as RecordOutcome] += t.count;
    else leave('members', t.outcome === 'left' ? 'status_left' : t.outcome, t.source, t.count);
  }
}

/** Counts every source record of `desired` as planned, unchanged or left alone by `plan`. */
export function accountRecords(plan: Plan, desired: DesiredState): RecordAccounting {
  const strongest = strongestByRecord(plan.changes);
  const why = leftAloneIndex(plan);
  const out = {} as RecordAccounting;
  const leftAlone = new Map<string, LeftAlone>();
  const leave: Leave = (entity, reason, source, count = 1) => {
    const k = `${entity}\u0000${reason}\u0000${source}`;
    const entry = leftAlone.get(k);
    if (entry) entry.count += count;
    else leftAlone.set(k, { reason, source, count });
  };
  for (const entity of ENTITY_KINDS) out[entity] = { total: 0, outcomes: { create: 0, adopt: 0, update: 0, remove: 0, unchanged: 0 }, leftAlone: [] };
  for (const entity of ENTITY_KINDS) {
    if (entity === 'members') accountMembers(desired, plan.changes, why, out.members, leave);
    else accountList(entity, desired[entity], strongest[entity], why, out[entity], leave);
  }
  for (const q of desired.quarantine) {
    out[q.entity].total += 1;
    leave(q.entity, 'quarantined', q.source);
  }
  for (const x of desired.excluded ?? []) {
    for (const entity of ENTITY_KINDS) {
      if (x[entity] === 0) continue;
      out[entity].total += x[entity];
      leave(entity, 'out_of_scope', x.source, x[entity]);
    }
  }
  for (const [k, entry] of leftAlone) out[k.slice(0, k.indexOf('\u0000')) as EntityKind].leftAlone.push(entry);
  // A fixed order of reasons (a stable sort keeps the sources in the order they were met).
  for (const entity of ENTITY_KINDS) out[entity].leftAlone.sort((a, b) => reasonRank(a.reason) - reasonRank(b.reason));
  return out;
}

/**
 * A count as the reports print it: `199,800`, as toLocaleString('en-US') writes it, without Intl: the first Intl call
 * of a process maps ICU's data (some 5 MB of RSS), which a sync's summary line added at its end (issue 31).
 */
export const formatCount = (n: number): string => String(n).replace(/\B(?=(\d{3})+$)/g, ',');

const plural = (n: number, entity: EntityKind) => `${formatCount(n)} ${n === 1 ? entity.slice(0, -1) : entity}`;

/** The words of a left-alone reason: `with status left: not created`. */
export function leftAloneText(reason: string): string {
  if (reason === 'status_left') return 'with status left: not created';
  if (reason === 'ended') return 'past their end_date: not created';
  if (reason === 'scheduled') return 'scheduled (start date ahead): not created yet';
  if (reason === 'quarantined') return 'quarantined: not planned (see quarantined)';
  if (reason === 'out_of_scope') return "out of scope (the source's include/exclude rules): not read";
  if (reason.startsWith('blocked:')) return `blocked (${reason.slice('blocked:'.length)}): neither created nor updated`;
  if (reason.startsWith('withheld:')) return `withheld (${reason.slice('withheld:'.length)}): not changed`;
  return reason;
}

/**
 * The text lines: a heading, one line per entity (`members: 313 records: 304 to create, 0 to update, 0 unchanged,
 * 9 left alone`), then one line per reason and source (`7 members with status left: not created (source hr)`).
 */
export function accountingLines(acc: RecordAccounting): string[] {
  const lines = ['Source records (each counted once: planned, unchanged or left alone):'];
  const words: Record<RecordOutcome, string> = { create: 'to create', adopt: 'to adopt', update: 'to update', remove: 'to remove', unchanged: 'unchanged' };
  for (const entity of ENTITY_KINDS) {
    const a = acc[entity];
    const left = a.leftAlone.reduce((n, l) => n + l.count, 0);
    const parts = RECORD_OUTCOMES.filter((o) => o === 'create' || o === 'update' || o === 'unchanged' || a.outcomes[o] > 0).map((o) => `${formatCount(a.outcomes[o])} ${words[o]}`);
    if (left > 0) parts.push(`${formatCount(left)} left alone`);
    lines.push(`  ${entity}: ${formatCount(a.total)} records: ${parts.join(', ')}`);
  }
  for (const entity of ENTITY_KINDS) {
    for (const l of acc[entity].leftAlone) lines.push(`  ${plural(l.count, entity)} ${leftAloneText(l.reason)}${l.source ? ` (source ${l.source})` : ''}`);
  }
  return lines;
}

/** The JSON form (`records` of `plan --output json` and `sync --output json`). */
export function accountingToJson(acc: RecordAccounting): Record<EntityKind, { total: number } & Record<RecordOutcome, number> & { left_alone: { reason: string; source: string; count: number }[] }> {
  const out = {} as ReturnType<typeof accountingToJson>;
  for (const entity of ENTITY_KINDS) {
    const a = acc[entity];
    out[entity] = { total: a.total, ...a.outcomes, left_alone: a.leftAlone.map((l) => ({ reason: l.reason, source: l.source, count: l.count })) };
  }
  return out;
}
