/**
 * `sync --only SELECTOR` (issue 22): the part of a plan that touches the selected records, plus what those changes
 * need first. Pure: a function of the full plan, the desired state and the platform records; the run computes the
 * full plan as usual (same sources, same guards) and applies only this selection.
 *
 * A selector is a source id (of a department, position or member), an e-mail (a member's, in the sources or on the
 * platform) or a department path (names from the top, `Engineering/Backend`; the platform's `/Tenant/Engineering/
 * Backend` is accepted too). The closure follows each change's `dependsOn` (a new member waits for its new department,
 * which waits for its new parent), and a change that `completes` a selected create comes with it.
 */
import type { Change, DesiredState, EntityKind, Plan, PlatformDepartment, PlatformPosition, QuarantineEntry } from '../domain/index.js';
import type { MemberFinder } from './members/types.js';
import { countChanges } from '../domain/index.js';
import { normEmail } from './normalise.js';

/** The platform records a selector is matched against (the mirror; its members by point reads). */
export interface SelectionPlatform {
  departments: readonly PlatformDepartment[];
  positions: readonly PlatformPosition[];
  members: MemberFinder;
}

/** One record a selector named. */
export interface SelectedRecord {
  /** The selector as given. */
  selector: string;
  entity: EntityKind;
  /** Source id (third id); empty when only the platform knows the record and it carries none. */
  thirdId: string;
  platformId?: string;
  /** A display name, for the summary (`Ann Lee`, `Engineering`). */
  label?: string;
}

/** The selected part of a plan. */
export interface PlanSelection {
  /** The plan holding only the selected changes and their prerequisites (counts, warnings and withheld narrowed). */
  plan: Plan;
  records: SelectedRecord[];
  /** Selectors that matched no record. */
  unmatched: string[];
  /** Ids of the changes that touch a selected record (the rest of `plan.changes` are prerequisites). */
  selectedChangeIds: string[];
  /** Quarantine entries of the selected records. */
  quarantine: QuarantineEntry[];
}

const isLive = (status: string): boolean => status !== 'deleted' && status !== 'left';
const trimPath = (p: string): string =>
  p
    .split('/')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .join('/');

/** The records `selector` names (may be several: an e-mail on two records, a path shared by two departments). */
export function matchSelector(selector: string, desired: DesiredState, platform: SelectionPlatform): SelectedRecord[] {
  const sel = selector.trim();
  const out = new Map<string, SelectedRecord>();
  const add = (entity: EntityKind, thirdId: string, platformId: string | undefined, label: string | undefined): void => {
    const key = `${entity}:${thirdId || `#${platformId ?? ''}`}`;
    const prev = out.get(key);
    if (prev) {
      if (!prev.platformId && platformId) prev.platformId = platformId;
      return;
    }
    out.set(key, { selector, entity, thirdId, ...(platformId ? { platformId } : {}), ...(label ? { label } : {}) });
  };
  if (sel === '') return [];
  const members = platform.members;
  const liveDepts = platform.departments.filter((d) => isLive(d.status));
  const livePositions = platform.positions.filter((p) => isLive(p.status));

  if (sel.includes('@')) {
    const email = normEmail(sel);
    for (const d of desired.members) if (d.email !== undefined && normEmail(d.email) === email) add('members', d.source_id, members.accountOf(d.source_id), d.display_name);
    for (const m of members.liveByEmail(email)) add('members', members.sourceIdOf(m), m.account_id, m.display_name);
    return [...out.values()];
  }
  // Source ids.
  for (const d of desired.departments) if (d.source_id === sel) add('departments', d.source_id, liveDepts.find((p) => p.third_department_id === sel)?.id, d.name);
  for (const d of desired.positions) if (d.source_id === sel) add('positions', d.source_id, livePositions.find((p) => p.third_position_id === sel)?.id, d.name);
  const wanted = desired.members.get(sel);
  if (wanted) add('members', wanted.source_id, members.accountOf(sel), wanted.display_name);
  for (const q of desired.quarantine) if (q.source_id === sel) add(q.entity, sel, undefined, undefined);
  for (const p of liveDepts) if (p.third_department_id === sel) add('departments', sel, p.id, p.name);
  for (const p of livePositions) if (p.third_position_id === sel) add('positions', sel, p.id, p.name);
  for (const m of members.liveBySourceId(sel)) add('members', sel, m.account_id, m.display_name);
  if (out.size > 0) return [...out.values()];
  // Department paths.
  const want = trimPath(sel);
  if (want === '') return [];
  const byId = new Map(desired.departments.map((d) => [d.source_id, d]));
  const pathOf = (id: string): string => {
    const names: string[] = [];
    const seen = new Set<string>();
    for (let cur = byId.get(id); cur && !seen.has(cur.source_id); cur = cur.parent_source_id ? byId.get(cur.parent_source_id) : undefined) {
      seen.add(cur.source_id);
      names.unshift(cur.name.trim());
    }
    return names.join('/');
  };
  for (const d of desired.departments) if (pathOf(d.source_id) === want) add('departments', d.source_id, liveDepts.find((p) => p.third_department_id === d.source_id)?.id, d.name);
  for (const p of liveDepts) {
    const full = trimPath(p.path);
    const underRoot = full.split('/').slice(1).join('/');
    if (full === want || underRoot === want) add('departments', p.third_department_id, p.id, p.name);
  }
  return [...out.values()];
}

/** True when `c` writes the record `r`. */
function touches(c: Pick<Change, 'entity' | 'thirdId' | 'platformId'>, r: SelectedRecord): boolean {
  return c.entity === r.entity && ((r.thirdId !== '' && c.thirdId === r.thirdId) || (r.platformId !== undefined && c.platformId === r.platformId));
}

/** The part of `plan` that touches the records `selectors` name, with the changes they depend on (in plan order). */
export function selectPlan(plan: Plan, desired: DesiredState, platform: SelectionPlatform, selectors: readonly string[]): PlanSelection {
  const records: SelectedRecord[] = [];
  const unmatched: string[] = [];
  for (const s of selectors) {
    const found = matchSelector(s, desired, platform);
    if (found.length === 0) unmatched.push(s);
    for (const r of found) if (!records.some((o) => o.entity === r.entity && o.thirdId === r.thirdId && o.platformId === r.platformId)) records.push(r);
  }
  const selected = (c: Pick<Change, 'entity' | 'thirdId' | 'platformId'>): boolean => records.some((r) => touches(c, r));
  const byId = new Map(plan.changes.map((c) => [c.id, c]));
  const direct = new Set(plan.changes.filter(selected).map((c) => c.id));
  // A change that completes a selected create belongs with it.
  for (const c of plan.changes) if (c.completes !== undefined && direct.has(c.completes)) direct.add(c.id);
  const keep = new Set<string>();
  const stack = [...direct];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (keep.has(id)) continue;
    keep.add(id);
    const c = byId.get(id);
    if (c) for (const d of c.dependsOn) if (!keep.has(d)) stack.push(d);
  }
  const changes = plan.changes.filter((c) => keep.has(c.id));
  const narrowed: Plan = {
    ...plan,
    changes,
    warnings: plan.warnings.filter((w) => records.some((r) => touches({ entity: w.entity, thirdId: w.thirdId, ...(w.platformId ? { platformId: w.platformId } : {}) }, r))),
    withheld: plan.withheld.filter((w) => selected(w.change)),
    counts: countChanges(changes),
  };
  const quarantine = desired.quarantine.filter((q) => q.source_id !== undefined && records.some((r) => r.entity === q.entity && r.thirdId === q.source_id));
  return { plan: narrowed, records, unmatched, selectedChangeIds: changes.filter((c) => direct.has(c.id)).map((c) => c.id), quarantine };
}

/** The longest selector accepted (a source id, an e-mail or a path is far shorter). */
export const MAX_SELECTOR_LENGTH = 1024;

/**
 * Why `selector` can never match a record, told before any source is read (`sync --only` exits 2, `POST
 * /sync?only=` answers 400); undefined when it may match. Only the form is checked: whether a record matches needs
 * the sources.
 */
export function selectorProblem(selector: string): string | undefined {
  const sel = selector.trim();
  if (sel === '') return 'is empty: give a source id, an e-mail or a department path';
  if (selector.length > MAX_SELECTOR_LENGTH) return `is longer than ${MAX_SELECTOR_LENGTH} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(selector)) return 'contains a control character';
  if (sel.includes('@')) {
    const at = sel.indexOf('@');
    if (at === 0 || at === sel.length - 1 || sel.indexOf('@', at + 1) >= 0) return 'is not an e-mail address (one @ with a name before it and a domain after it)';
  } else if (trimPath(sel) === '') return 'is not a department path (it names no department)';
  return undefined;
}

/** The sentence for a selector `selectorProblem` refuses (exit 2, or 400 from the daemon). */
export function selectorProblemMessage(selector: string, problem: string): string {
  return `--only ${JSON.stringify(selector)} ${problem}`;
}

/** The sentence for selectors that matched nothing (exit 2), for the operator who typed them (`sync --only`). */
export function unmatchedMessage(unmatched: readonly string[]): string {
  return `--only ${unmatched.map((s) => JSON.stringify(s)).join(', ')} matched no record: not a source id, e-mail or department path in the sources or on the platform (check the id with \`orgsync explain\`)`;
}

/**
 * The same sentence as the run history, /status and the logs keep it (issue 44): the selectors by position, never by
 * value, since a selector may be a person's e-mail sent by a webhook (`POST /sync?only=`).
 */
export function unmatchedRecordMessage(selectors: readonly string[], unmatched: readonly string[]): string {
  const missing = new Set(unmatched);
  const positions = selectors.flatMap((s, i) => (missing.has(s) ? [i + 1] : []));
  const listed = positions.length > 1 ? `${positions.slice(0, -1).join(', ')} and ${positions[positions.length - 1]!}` : String(positions[0] ?? unmatched.length);
  return `--only: selector${positions.length > 1 ? 's' : ''} ${listed} of ${selectors.length} matched no record: not a source id, e-mail or department path in the sources or on the platform (selectors are not recorded: they may name a person)`;
}
