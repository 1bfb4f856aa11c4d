/**
 * `orgsync explain` (issue 10): for one record, named by third id, platform id or e-mail, where it comes from (source,
 * location, each mapped field with the source it came from), what the mirror holds, whether this sync owns it and
 * since when, and what the next plan would do to it and why.
 */
import type { Change, LifecycleEvent, DesiredDepartment, DesiredMember, DesiredPosition, DesiredState, EntityKind, Plan, PlatformDepartment, PlatformMember, PlatformPosition, QuarantineEntry, RecordOrigin } from '../domain/index.js';
import type { Mirror } from '../mirror/mirror.js';
import type { OwnershipStore } from '../mirror/ownership.js';
import type { TrustStateStore } from '../mirror/trust-state.js';
import { departmentOwnership, normEmail, positionOwnership } from '../planner/index.js';

type DesiredRecord = DesiredDepartment | DesiredPosition | DesiredMember;
type PlatformRecord = PlatformDepartment | PlatformPosition | PlatformMember;

/** Everything explain looks at: the state of one plan-mode run. */
export interface ExplainState {
  syncId: string;
  desired: DesiredState;
  plan: Plan;
  mirror: Mirror;
  ownership: OwnershipStore;
  trust: TrustStateStore;
}

/** What explain found about one record. */
export interface RecordExplanation {
  entity: EntityKind;
  thirdId: string;
  platformId?: string;
  source?: { name: string; location: string; fields: { field: string; value: string; from: string }[] };
  quarantine: QuarantineEntry[];
  mirror?: PlatformRecord;
  ownership: { owned: boolean; kind: string; since?: string; detail: string };
  /** What the next plan does to it. */
  next: { changes: Change[]; withheld: { change: Change; why: string; dueAt?: string }[]; warnings: string[]; refusal?: string; lifecycle?: string; leftOut?: string };
}

const platformIdOf = (entity: EntityKind, r: PlatformRecord): string => (entity === 'members' ? (r as PlatformMember).account_id : (r as PlatformDepartment).id);
const thirdIdOf = (entity: EntityKind, r: PlatformRecord): string =>
  entity === 'members' ? (r as PlatformMember).third_user_id : entity === 'departments' ? (r as PlatformDepartment).third_department_id : (r as PlatformPosition).third_position_id;
const isLive = (r: PlatformRecord): boolean => r.status !== 'deleted' && r.status !== 'left';

/** Finds every record `key` names (third id, platform id or e-mail), in sources, quarantine, mirror and ownership. */
export function explainRecords(state: ExplainState, key: string): RecordExplanation[] {
  const k = key.trim();
  const email = normEmail(k);
  const snap = state.mirror.snapshot();
  const found = new Map<string, { entity: EntityKind; thirdId: string; platformId?: string }>();
  const add = (entity: EntityKind, thirdId: string, platformId?: string): void => {
    const id = `${entity}:${thirdId || `#${platformId}`}`;
    const prev = found.get(id);
    if (!prev || (!prev.platformId && platformId)) found.set(id, { entity, thirdId, ...(platformId ? { platformId } : {}) });
  };
  for (const entity of ['departments', 'positions'] as const) {
    for (const d of state.desired[entity]) if (d.source_id === k) add(entity, d.source_id);
    for (const q of state.desired.quarantine) if (q.entity === entity && q.source_id === k) add(entity, k);
    const records = snap[entity] as { byId: ReadonlyMap<string, PlatformRecord> };
    // Live records first, so a tombstone sharing a third id does not stand for the record.
    for (const r of [...records.byId.values()].sort((a, b) => Number(isLive(b)) - Number(isLive(a)))) {
      const pid = platformIdOf(entity, r);
      const third = thirdIdOf(entity, r);
      if (pid === k || (third !== '' && third === k)) add(entity, third, pid);
    }
  }
  findMembers(state, k, email, add);
  // A record found by its third id in the sources and by its platform id in the mirror is one record.
  for (const [id, f] of found) {
    if (f.thirdId === '' && f.platformId) continue;
    if (!f.platformId) {
      const withPid = [...found.values()].find((o) => o !== f && o.entity === f.entity && o.thirdId === f.thirdId && o.platformId);
      if (withPid) found.delete(id);
    }
  }
  return [...found.values()].map((f) => explainOne(state, f.entity, f.thirdId, f.platformId, snap));
}

/**
 * The members `k` names: in the sources by source id or e-mail, on the platform by platform id, source id (this
 * sync's record of the account, else its third id) or e-mail, live records before tombstones. Read by key, and the
 * e-mail by one pass over each side a window at a time: a million members are not held to find one.
 */
function findMembers(state: ExplainState, k: string, email: string, add: (entity: EntityKind, thirdId: string, platformId?: string) => void): void {
  const { ownership, mirror } = state;
  const byId = state.desired.members.get(k);
  if (byId) add('members', byId.source_id);
  if (k.includes('@')) for (const d of state.desired.members) if (d.email !== undefined && normEmail(d.email) === email) add('members', d.source_id);
  for (const q of state.desired.quarantine) if (q.entity === 'members' && q.source_id === k) add('members', k);
  const hits: PlatformMember[] = [];
  const byPid = mirror.get('members', k);
  if (byPid) hits.push(byPid);
  const owned = ownership.accountOf(k);
  const byOwned = owned === undefined ? undefined : mirror.get('members', owned);
  if (byOwned) hits.push(byOwned);
  const byThird = mirror.byThirdId('members', k);
  if (byThird) hits.push(byThird);
  if (k.includes('@')) for (const m of mirror.scanMembers()) if (m.email !== '' && normEmail(m.email) === email) hits.push(m);
  for (const m of hits.sort((a, b) => Number(isLive(b)) - Number(isLive(a)))) {
    const third = ownership.sourceIdOfAccount(m.account_id) ?? m.third_user_id;
    if (m.account_id === k || (third !== '' && third === k) || (m.email !== '' && normEmail(m.email) === email)) add('members', third, m.account_id);
  }
  if (owned !== undefined) add('members', k, owned);
}

function explainOne(
  state: ExplainState,
  entity: EntityKind,
  thirdId: string,
  platformIdHint: string | undefined,
  snap: ReturnType<Mirror['snapshot']>,
): RecordExplanation {
  const desired = !thirdId ? undefined : entity === 'members' ? state.desired.members.get(thirdId) : (state.desired[entity] as DesiredRecord[]).find((d) => d.source_id === thirdId);
  const ownedAccount = entity === 'members' && thirdId ? state.ownership.accountOf(thirdId) : undefined;
  const mirror = entity === 'members' ? memberRecord(state.mirror, platformIdHint, ownedAccount, thirdId) : otherRecord(snap[entity], platformIdHint, thirdId);
  const platformId = mirror ? platformIdOf(entity, mirror) : platformIdHint;
  const out: RecordExplanation = {
    entity,
    thirdId,
    ...(platformId ? { platformId } : {}),
    quarantine: state.desired.quarantine.filter((q) => q.entity === entity && thirdId !== '' && q.source_id === thirdId),
    ...(mirror ? { mirror } : {}),
    ownership: ownershipOf(state, entity, thirdId, mirror, ownedAccount),
    next: { changes: [], withheld: [], warnings: [] },
  };
  if (desired) out.source = sourceOf(entity, desired);
  const mine = (c: Change): boolean => c.entity === entity && ((thirdId !== '' && c.thirdId === thirdId) || (platformId !== undefined && c.platformId === platformId));
  out.next.changes = state.plan.changes.filter(mine);
  out.next.withheld = state.plan.withheld.filter((w) => mine(w.change)).map((w) => ({ change: w.change, why: w.why, ...(w.dueAt ? { dueAt: w.dueAt } : {}) }));
  out.next.warnings = state.plan.warnings.filter((w) => w.entity === entity && ((thirdId !== '' && w.thirdId === thirdId) || (platformId !== undefined && w.platformId === platformId))).map((w) => `${w.code}: ${w.message}`);
  if (state.plan.refusal) out.next.refusal = `${state.plan.refusal.guard}: ${state.plan.refusal.message}`;
  const lifecycle = state.plan.lifecycle;
  const life = entity === 'members' && thirdId !== '' ? [...(lifecycle?.scheduled ?? []), ...(lifecycle?.ended ?? []), ...(lifecycle?.ending ?? [])].find((e) => e.thirdId === thirdId) : undefined;
  if (life) out.next.lifecycle = lifecycleLine(life);
  const left = entity === 'members' && desired !== undefined && (desired as DesiredMember).status === 'left' && !life;
  if (left) out.next.leftOut = leaverLine(mirror as PlatformMember | undefined, ownedAccount !== undefined);
  return out;
}

/** The member a record explanation is about: by platform id, the owned account, then the third id. */
function memberRecord(mirror: Mirror, platformId: string | undefined, ownedAccount: string | undefined, thirdId: string): PlatformMember | undefined {
  return (platformId ? mirror.get('members', platformId) : undefined) ?? (ownedAccount ? mirror.get('members', ownedAccount) : undefined) ?? (thirdId ? mirror.byThirdId('members', thirdId) : undefined);
}

/** A department or position by platform id, then third id. */
function otherRecord(records: { byId: ReadonlyMap<string, PlatformRecord>; byThirdId: ReadonlyMap<string, PlatformRecord> }, platformId: string | undefined, thirdId: string): PlatformRecord | undefined {
  return (platformId ? records.byId.get(platformId) : undefined) ?? (thirdId ? records.byThirdId.get(thirdId) : undefined);
}

/**
 * Why the plan leaves a leaver out (issue 45): the source says status left, and there is nothing this sync may do
 * (no live account, one not owned by this sync, or one already gone).
 */
function leaverLine(mirror: PlatformMember | undefined, owned: boolean): string {
  if (mirror === undefined || mirror.status === 'left') {
    return `not synced (status left): the source says status left${mirror ? ' and the account has already left the platform' : ' and no account is on the platform'}; a leaver is never created`;
  }
  if (!owned) return 'not synced (status left): the source says status left, but the account is not owned by this sync, so it is left alone (take it over with `orgsync adopt` to have it removed)';
  return 'not synced (status left): the source says status left';
}

const FIELDS: Record<EntityKind, string[]> = {
  departments: ['source_id', 'name', 'parent_source_id', 'sort_order'],
  positions: ['source_id', 'name', 'description', 'sort_order'],
  members: ['source_id', 'display_name', 'email', 'phone', 'title', 'department_source_id', 'status'],
};

function sourceOf(entity: EntityKind, d: DesiredRecord): NonNullable<RecordExplanation['source']> {
  const origin: RecordOrigin = d.origin ?? { source: '(unknown)', location: '' };
  const fields: { field: string; value: string; from: string }[] = [];
  for (const f of FIELDS[entity]) {
    const v = (d as unknown as Record<string, unknown>)[f];
    if (v === undefined || v === '') continue;
    fields.push({ field: f, value: String(v), from: origin.fieldSources?.[f] ?? origin.source });
  }
  return { name: origin.source, location: origin.location, fields };
}

function ownershipOf(state: ExplainState, entity: EntityKind, thirdId: string, mirror: PlatformRecord | undefined, ownedAccount: string | undefined): RecordExplanation['ownership'] {
  const adoption = state.ownership
    .adoptions()
    .filter((a) => a.entity === entity && ((thirdId !== '' && a.thirdId === thirdId) || (mirror !== undefined && a.platformId === platformIdOf(entity, mirror))))
    .at(-1);
  if (entity === 'members') {
    const facts = thirdId ? state.trust.memberOwnership(thirdId) : undefined;
    if (facts && ownedAccount) {
      return { owned: true, kind: 'owned', since: facts.ownedSince, detail: `owned by ${state.syncId} since ${facts.ownedSince} (${facts.origin === 'adopted' ? `adopted${adoption ? `, matched by ${adoption.matchedBy}` : ''}` : 'created by this sync'})` };
    }
    if (!mirror) return { owned: false, kind: 'absent', detail: 'not on the platform' };
    return { owned: false, kind: 'unmanaged', detail: `not owned by ${state.syncId}: never patched or removed (take it over with \`orgsync adopt\` or sync.adopt.members)` };
  }
  if (!mirror) return { owned: false, kind: 'absent', detail: 'not on the platform' };
  const kind = entity === 'departments' ? departmentOwnership(mirror as PlatformDepartment, state.syncId) : positionOwnership(mirror as PlatformPosition, state.syncId);
  if (kind === 'owned') {
    return adoption
      ? { owned: true, kind, since: adoption.at, detail: `owned by ${state.syncId} (metadata.managed_by) since ${adoption.at} (adopted, matched by ${adoption.matchedBy})` }
      : ownedSinceSeen(state, entity, mirror);
  }
  if (kind === 'system') return { owned: false, kind, detail: 'a system record (the tenant root or a system position): never touched' };
  if (kind === 'other_sync') return { owned: false, kind, detail: `managed by another sync (metadata.managed_by = ${String((mirror as PlatformDepartment).metadata.managed_by)}): never touched` };
  return { owned: false, kind, detail: `not owned by ${state.syncId} (no metadata.managed_by): never patched or removed (take it over with \`orgsync adopt\`)` };
}

function ownedSinceSeen(state: ExplainState, entity: EntityKind, r: PlatformRecord): RecordExplanation['ownership'] {
  const seen = entity === 'members' ? undefined : state.trust.firstSeenOwned(entity, platformIdOf(entity, r));
  return seen
    ? { owned: true, kind: 'owned', since: seen, detail: `owned by ${state.syncId} (metadata.managed_by) since ${seen} (created by this sync; the time of the sync run that first saw it)` }
    : { owned: true, kind: 'owned', detail: `owned by ${state.syncId} (metadata.managed_by), created by this sync (not dated: no sync run has recorded it yet)` };
}

const q = (v: unknown): string => JSON.stringify(v);

function mirrorLine(entity: EntityKind, r: PlatformRecord, departmentPath: (id: string) => string | undefined): string {
  if (entity === 'members') {
    const m = r as PlatformMember;
    const path = departmentPath(m.department_id);
    return `account_id ${m.account_id}, status ${m.status}, display_name ${q(m.display_name)}, email ${q(m.email)}, phone ${q(m.phone)}, title ${q(m.title)}, third_user_id ${q(m.third_user_id)}, department_id ${q(m.department_id)}${path ? ` (${path})` : ''}, updated_at ${m.updated_at}`;
  }
  if (entity === 'departments') {
    const d = r as PlatformDepartment;
    return `id ${d.id}, status ${d.status}, path ${q(d.path)}, parent_id ${q(d.parent_id)}, third_department_id ${q(d.third_department_id)}, members ${d.member_count}, updated_at ${d.updated_at}`;
  }
  const p = r as PlatformPosition;
  return `id ${p.id}, status ${p.status}, name ${q(p.name)}, third_position_id ${q(p.third_position_id)}, updated_at ${p.updated_at}`;
}

/** Why a lifecycle rule holds a member back or takes them out (sync.lifecycle). */
export function lifecycleLine(e: LifecycleEvent): string {
  if (e.rule === 'scheduled') return `scheduled: not created yet: start_date ${e.date}; created from ${e.createOn} (sync.lifecycle.create_days_before_start)`;
  if (e.rule === 'ending') return `ending: end_date ${e.date} is ahead: synced as the source says until then; ${e.action === 'suspend' ? 'suspended' : 'removed'} from ${e.at} (sync.lifecycle.end_action)`;
  const what = e.action === 'not_created' ? 'not created' : e.action === 'suspend' ? 'suspended' : 'removed';
  return `ended: end_date ${e.date} has passed (${e.at}): ${what}, whatever status the source gives (sync.lifecycle.end_action)`;
}

/** The text report of explain (stdout). */
export function renderExplanations(list: readonly RecordExplanation[], departmentPath: (id: string) => string | undefined = () => undefined): string {
  const lines: string[] = [];
  for (const e of list) {
    lines.push(`${e.entity} ${e.thirdId || '(no third id)'}${e.platformId ? ` (platform id ${e.platformId})` : ''}`);
    if (e.source) {
      lines.push(`  source:     ${e.source.name}${e.source.location ? ` at ${e.source.location}` : ''}`);
      const w = e.source.fields.reduce((n, f) => Math.max(n, f.field.length), 0);
      for (const f of e.source.fields) lines.push(`    ${f.field.padEnd(w)}  ${q(f.value)}  from ${f.from}`);
    } else if (e.quarantine.length === 0) lines.push('  source:     not in the sources');
    for (const qe of e.quarantine) lines.push(`  quarantined: ${qe.source} at ${qe.location}: ${qe.reason}: ${qe.message}`);
    lines.push(`  mirror:     ${e.mirror ? mirrorLine(e.entity, e.mirror, departmentPath) : 'no record on the platform'}`);
    lines.push(`  ownership:  ${e.ownership.detail}`);
    const next: string[] = [];
    if (e.next.lifecycle) next.push(e.next.lifecycle);
    if (e.next.leftOut && e.next.changes.length === 0 && e.next.withheld.length === 0) next.push(`nothing: ${e.next.leftOut}`);
    for (const c of e.next.changes) next.push(`${c.op}: ${c.description} (why: ${c.reason})`);
    for (const w of e.next.withheld) next.push(`withheld ${w.change.op}: ${w.change.description} (why: ${w.why}${w.dueAt ? `; due ${w.dueAt}` : ''})`);
    for (const w of e.next.warnings) next.push(`no write: ${w}`);
    if (next.length === 0) {
      if (e.quarantine.length > 0) next.push('nothing: the record is quarantined, so the plan neither writes nor removes it');
      else if (e.source && e.ownership.owned) next.push('nothing: the platform already matches the sources');
      else if (!e.ownership.owned && e.mirror) next.push(`nothing: not owned by this sync, so it is left alone`);
      else next.push('nothing');
    }
    lines.push(`  next plan:  ${next[0]}`);
    for (const n of next.slice(1)) lines.push(`              ${n}`);
    if (e.next.refusal && (e.next.changes.length > 0 || e.next.withheld.length > 0)) lines.push(`              (the plan as a whole is refused by ${e.next.refusal})`);
    lines.push('');
  }
  return `${lines.join('\n')}`;
}
