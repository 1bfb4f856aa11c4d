/**
 * Seeded random histories of one tenant (issue 42: the planning path's equivalence): HR sources that change from run to
 * run (creates, moves, renames, leavers, re-hires, dated starts and ends, duplicate ids and contacts, bad records, a
 * second source that merges in) and a small platform that applies each plan as the real one would, with what happens
 * around a sync: unmanaged people and departments that collide, a crash between a create and its ownership record, a
 * failed completion, an owned member deleted by hand, ownership released or lost.
 *
 * The history is a value of the seed and of the plans it is given: two planning paths that plan alike see the same
 * history, so a test compares their plans step by step and the first difference names its seed and step.
 */
import { listStage, SourceCollector, type SourceBatch } from '../../src/desired/index.js';
import type { Change, DesiredMemberStatus, MemberStage, Plan, PlanValue, PlatformDepartment, PlatformMember, PlatformPosition } from '../../src/domain/index.js';
import type { PlannerSnapshot, PlanOptions } from '../../src/planner/index.js';
import { mulberry32 } from './prng.js';

/** The tenant as lists (the planner's snapshot before its member side is built from them). */
export type TenantLists = Omit<PlannerSnapshot, 'members'> & { members: PlatformMember[]; ownedMembers: Map<string, string> };

/** One person as a source row holds them (raw columns, before mapping). */
interface PersonRow {
  id: string;
  name: string;
  email: string;
  phone: string;
  title: string;
  dept: string;
  status: string;
  start: string;
  end: string;
}

interface DeptRow {
  id: string;
  name: string;
  parent: string;
}

/** The tenant of a history: the platform's records and this sync's state DB, as the planner reads them. */
interface Platform {
  departments: PlatformDepartment[];
  positions: PlatformPosition[];
  members: PlatformMember[];
  owned: Map<string, string>;
  pendingMembers: Set<string>;
  pendingContacts: Map<string, string>;
  owed: Map<string, Record<string, PlanValue>>;
}

const SYNC = 'hr';
const FIRST = ['Ada', 'Alan', 'Grace', 'Linus', 'Edsger', 'Radia', 'Hedy', 'Tim', 'Barbara', 'Ken'];
const LAST = ['Lovelace', 'Turing', 'Hopper', 'Torvalds', 'Dijkstra', 'Perlman', 'Lamarr', 'Liskov', 'Thompson'];
const TITLES = ['Engineer', 'Manager', 'Analyst', 'Designer', ' Senior Engineer', 'Director'];
const DEPT_NAMES = ['Engineering', 'Sales', 'Finance', 'Support', 'Legal', 'Research', 'People', 'Data', 'Ops'];
const DAY = 86_400_000;
/** The run's clock: the history's first run, a day later each step. */
export const HISTORY_START = Date.UTC(2026, 10, 2, 9);

/** One seeded history; `next(plan)` applies a plan and moves the sources and the tenant on by one day. */
export class RandomHistory {
  readonly rand: () => number;
  private readonly people = new Map<string, PersonRow>();
  private readonly extra = new Map<string, PersonRow>();
  private depts: DeptRow[] = [];
  private readonly positions = new Map<string, string>();
  private readonly platform: Platform;
  private nextId = 1;
  private step = 0;
  readonly options: Omit<PlanOptions, 'now'>;

  constructor(readonly seed: number) {
    this.rand = mulberry32(seed * 7919 + 17);
    const root: PlatformDepartment = { id: 'root', parent_id: '', name: 'Acme', path: '/Acme', depth: 0, sort_order: 0, third_department_id: '', member_count: 0, metadata: {}, status: 'active', updated_at: iso(HISTORY_START - DAY) };
    this.platform = { departments: [root], positions: [], members: [], owned: new Map(), pendingMembers: new Set(), pendingContacts: new Map(), owed: new Map() };
    this.options = this.randomOptions();
    for (let i = 0; i < 6; i++) this.addDept();
    for (let i = 0; i < 4; i++) this.positions.set(`P${i + 1}`, TITLES[i]!.trim());
    const n = 15 + Math.floor(this.rand() * 25);
    for (let i = 0; i < n; i++) this.addPerson();
  }

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.rand() * list.length)]!;
  }

  private chance(p: number): boolean {
    return this.rand() < p;
  }

  private randomOptions(): Omit<PlanOptions, 'now'> {
    const adoptMembers = this.pick([[], [], ['email'], ['phone'], ['email', 'phone']]);
    return {
      syncId: SYNC,
      policy: this.pick(['sync', 'sync', 'sync', 'upsert-only', 'create-only'] as const),
      memberRemoval: this.pick(['left', 'suspended'] as const),
      adopt: { members: adoptMembers as ('email' | 'phone')[], departments: this.pick([[], ['name'], ['third_id']]) as never, positions: this.pick([[], ['name'], ['third_id']]) as never },
      deleteThreshold: { max_count: this.pick([3, 50, 500]), max_percent: this.pick([20, 100]) },
      ...(this.chance(0.5) ? { lifecycle: { createDaysBeforeStart: this.pick([0, 3]), endAction: this.pick(['remove', 'suspend'] as const) } } : {}),
      ...(this.chance(0.3) ? { stateKnown: true } : {}),
    };
  }

  private id(prefix: string): string {
    return `${prefix}${this.nextId++}`;
  }

  private addDept(): void {
    const parent = this.depts.length > 0 && this.chance(0.6) ? this.pick(this.depts).id : '';
    this.depts.push({ id: this.id('D'), name: this.pick(DEPT_NAMES), parent });
  }

  private phone(): string {
    return `(201) 555-${String(100 + Math.floor(this.rand() * 800)).padStart(4, '0')}`;
  }

  private person(id = this.id('E')): PersonRow {
    const first = this.pick(FIRST);
    const last = this.pick(LAST);
    const n = Math.floor(this.rand() * 60);
    return {
      id,
      name: this.chance(0.03) ? '' : `${first} ${last}`,
      email: this.chance(0.1) ? '' : `${first}.${last}${n}@example.com`,
      phone: this.chance(0.5) ? this.phone() : '',
      title: this.chance(0.8) ? this.pick(TITLES) : '',
      dept: this.depts.length > 0 && this.chance(0.85) ? this.pick(this.depts).id : this.chance(0.3) ? 'D999' : '',
      status: this.pick(['active', 'active', 'active', 'active', 'leave', 'gone']),
      start: this.chance(0.15) ? iso(HISTORY_START + (this.step + Math.floor(this.rand() * 6) - 1) * DAY).slice(0, 10) : '',
      end: this.chance(0.1) ? iso(HISTORY_START + (this.step + Math.floor(this.rand() * 6) - 2) * DAY).slice(0, 10) : '',
    };
  }

  private addPerson(): void {
    const p = this.person();
    this.people.set(p.id, p);
  }

  /** The sources of this step: `hr` (people, departments, positions) and, in some histories, `hris` merging in. */
  batches(stage: MemberStage = listStage()): SourceBatch[] {
    const hr = new SourceCollector({
      source: 'hr',
      stage,
      rank: 0,
      phoneRegion: 'US',
      authoritativeFields: [],
      departments: { fields: { id: 'id', name: 'name', parent: 'parent' } },
      positions: { fields: { id: 'id', name: 'name' } },
      members: { fields: { id: 'id', display_name: 'name', email: 'email', phone: 'phone', title: 'title', department: 'dept', status: 'status', start_date: 'start', end_date: 'end' }, status_map: { active: 'active', leave: 'suspended', gone: 'left' } },
    });
    this.depts.forEach((d, i) => hr.addDepartment((k) => (d as unknown as Record<string, string>)[k], `departments.csv:${i + 2}`));
    let line = 2;
    for (const [id, name] of this.positions) hr.addPosition((k) => (k === 'id' ? id : k === 'name' ? name : undefined), `positions.csv:${line++}`);
    line = 2;
    for (const p of this.people.values()) hr.addMember((k) => (p as unknown as Record<string, string>)[k], `members.csv:${line++}`);
    if (this.seed % 3 !== 0) return [hr.finish()];
    const hris = new SourceCollector({
      source: 'hris',
      stage,
      rank: 1,
      phoneRegion: 'US',
      authoritativeFields: this.seed % 2 === 0 ? ['members.title'] : [],
      members: { fields: { id: 'id', display_name: 'name', email: 'email', phone: 'phone', title: 'title', status: 'status' }, status_map: { Active: 'active', Inactive: 'left' } },
    });
    let i = 0;
    for (const p of this.extra.values()) hris.addMember((k) => (p as unknown as Record<string, string>)[k], `$.workers[${i++}]`);
    return [hr.finish(), hris.finish()];
  }

  /** The tenant now as lists, in the state DB's orders: the mirror's members by account, ownership by source id. */
  tenant(): TenantLists {
    const p = this.platform;
    return {
      departments: p.departments.map((d) => ({ ...d })),
      positions: p.positions.map((x) => ({ ...x })),
      members: p.members.map((m) => ({ ...m })).sort((a, b) => (a.account_id < b.account_id ? -1 : a.account_id > b.account_id ? 1 : 0)),
      ownedMembers: new Map([...p.owned].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      pendingCreates: { members: new Set(p.pendingMembers) },
      pendingMemberContacts: new Map(p.pendingContacts),
      owedCompletions: new Map(p.owed),
    };
  }

  /** The options of this step's plan. */
  planOptions(): PlanOptions {
    return { ...this.options, now: HISTORY_START + this.step * DAY };
  }

  /** Applies `plan` as the platform would (nothing when a guard refused it), then moves everything on by a day. */
  next(plan: Plan): void {
    if (!plan.refusal) new PlanApplier(this.platform, this.rand, () => this.id('a')).apply(plan.changes);
    this.step += 1;
    this.mutateSources();
    this.mutatePlatform();
  }

  private mutateSources(): void {
    const ids = [...this.people.keys()];
    for (const id of ids) {
      const p = this.people.get(id)!;
      const r = this.rand();
      if (r < 0.04) this.people.delete(id);
      else if (r < 0.08) p.title = this.pick(TITLES);
      else if (r < 0.11) p.dept = this.depts.length > 0 ? this.pick(this.depts).id : '';
      else if (r < 0.14) p.status = this.pick(['active', 'leave', 'gone']);
      else if (r < 0.16) p.name = `${this.pick(FIRST)} ${this.pick(LAST)}`;
      else if (r < 0.18) p.email = this.chance(0.5) ? '' : `${p.id.toLowerCase()}@example.com`;
      else if (r < 0.19) p.email = 'not-an-email';
      else if (r < 0.2) this.people.set(this.id('E'), { ...p, id: this.chance(0.5) ? p.id : this.id('E') });
    }
    const adds = Math.floor(this.rand() * 5);
    for (let i = 0; i < adds; i++) this.addPerson();
    // A duplicate id in the export (both copies are set aside), now and then.
    if (this.chance(0.15) && ids.length > 0) {
      const dup = this.people.get(this.pick(ids));
      if (dup) this.people.set(`${dup.id}#dup`, { ...dup });
    }
    if (this.chance(0.3)) this.addDept();
    if (this.chance(0.2) && this.depts.length > 1) this.depts.splice(Math.floor(this.rand() * this.depts.length), 1);
    if (this.chance(0.2) && this.depts.length > 0) this.pick(this.depts).name = this.pick(DEPT_NAMES);
    if (this.chance(0.15) && this.depts.length > 1) {
      const d = this.pick(this.depts);
      const to = this.pick(this.depts);
      if (to.id !== d.id) d.parent = to.id;
    }
    if (this.chance(0.2)) this.positions.set(this.id('P'), this.pick(TITLES).trim());
    if (this.chance(0.1) && this.positions.size > 1) this.positions.delete(this.pick([...this.positions.keys()]));
    // The second source: some of hr's people with another phone or title, and contractors of its own.
    if (this.seed % 3 === 0) {
      for (const p of this.people.values()) if (this.chance(0.1)) this.extra.set(p.id, { ...this.person(p.id), name: this.chance(0.5) ? '' : p.name, status: this.pick(['Active', 'Active', 'Inactive']), dept: '' });
      if (this.chance(0.5)) {
        const c = this.person(this.id('C'));
        this.extra.set(c.id, { ...c, status: 'Active', dept: '' });
      }
      if (this.chance(0.1) && this.extra.size > 0) this.extra.delete(this.pick([...this.extra.keys()]));
    }
  }

  private mutatePlatform(): void {
    const p = this.platform;
    const people = [...this.people.values()];
    // Someone else's member with a desired source id, or with a desired e-mail: conflicts and adoptions.
    if (this.chance(0.25) && people.length > 0) {
      const who = this.pick(people);
      const same = this.chance(0.5);
      p.members.push({ account_id: this.id('u'), display_name: `${this.pick(FIRST)} Other`, email: same ? '' : who.email.toLowerCase(), phone: '', third_user_id: same ? who.id : '', title: '', department_id: this.chance(0.5) ? 'root' : '', status: 'active', roles: ['tenant.member'], updated_at: iso(HISTORY_START) });
    }
    // A member this sync created, deleted by hand on the platform.
    if (this.chance(0.15) && p.owned.size > 0) {
      const account = this.pick([...p.owned.values()]);
      const m = p.members.find((x) => x.account_id === account);
      if (m) m.status = 'left';
    }
    // Ownership released (or the state DB restored from an old backup) for one member.
    if (this.chance(0.1) && p.owned.size > 0) p.owned.delete(this.pick([...p.owned.keys()]));
    // An unmanaged department under the root with a name the source uses.
    if (this.chance(0.15) && this.depts.length > 0) {
      const d = this.pick(this.depts);
      p.departments.push({ id: this.id('x'), parent_id: 'root', name: d.name, path: `/Acme/${d.name}`, depth: 1, sort_order: 0, third_department_id: this.chance(0.3) ? d.id : '', member_count: 0, metadata: {}, status: 'active', updated_at: iso(HISTORY_START) });
    }
    // A position nobody manages, with a source position's name.
    if (this.chance(0.1) && this.positions.size > 0) {
      const [id, name] = this.pick([...this.positions]);
      p.positions.push({ id: this.id('y'), name, description: '', sort_order: 0, third_position_id: this.chance(0.3) ? id : '', is_system: false, member_count: 0, agent_count: 0, metadata: {}, status: 'active', updated_at: iso(HISTORY_START) });
    }
  }
}

/** Applies a plan's changes to the small platform, in order, as the applier and the platform would. */
class PlanApplier {
  private readonly created = new Map<string, string>();

  constructor(
    private readonly p: Platform,
    private readonly rand: () => number,
    private readonly newId: () => string,
  ) {}

  apply(changes: readonly Change[]): void {
    for (const c of changes) {
      if (c.entity === 'members') this.member(c);
      else if (c.entity === 'departments') this.department(c);
      else this.position(c);
    }
  }

  private value(v: PlanValue | undefined): string {
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && typeof (v as { ref?: unknown }).ref === 'string') return this.created.get((v as { ref: string }).ref) ?? '';
    return v === undefined || v === null ? '' : String(v);
  }

  private target(c: Change): string {
    const path = c.request?.path ?? '';
    const ref = /\{ref:([^}]+)\}/.exec(path);
    if (ref) return this.created.get(ref[1]!) ?? '';
    return c.platformId ?? decodeURIComponent(path.split('/').pop() ?? '');
  }

  private member(c: Change): void {
    const p = this.p;
    const f = c.fields;
    if (c.op === 'create') {
      const account = c.platformId ?? this.newId();
      const existing = p.members.find((m) => m.account_id === account);
      const record: PlatformMember = { account_id: account, display_name: this.value(f.display_name), email: this.value(f.email), phone: this.value(f.phone), third_user_id: this.value(f.third_user_id), title: this.value(f.title), department_id: this.value(f.department_id), status: 'active', roles: ['tenant.member'], updated_at: iso(HISTORY_START) };
      if (existing) Object.assign(existing, record);
      else p.members.push(record);
      this.created.set(c.id, account);
      // Now and then the run stops between the POST and the ownership record: a pending create is left behind.
      if (this.rand() < 0.05) {
        p.pendingMembers.add(c.thirdId);
        p.pendingContacts.set(c.thirdId, `${record.email}\u0000${record.phone}`);
      } else p.owned.set(c.thirdId, account);
      return;
    }
    const account = this.target(c);
    const m = p.members.find((x) => x.account_id === account);
    if (c.op === 'adopt') {
      p.owned.set(c.thirdId, account);
      p.pendingMembers.delete(c.thirdId);
      p.pendingContacts.delete(c.thirdId);
    }
    if (!m || !c.request) return;
    if (c.request.method === 'DELETE') {
      m.status = 'left';
      return;
    }
    // A new member's completing PATCH fails now and then: the create owes it.
    if (c.completes !== undefined && this.rand() < 0.2) {
      p.owed.set(c.thirdId, { ...c.fields });
      return;
    }
    if (c.completes !== undefined) p.owed.delete(c.thirdId);
    for (const [k, v] of Object.entries(c.request.body ?? {})) (m as unknown as Record<string, string>)[k] = this.value(v);
    if (c.op === 'update' && f.third_user_id !== undefined) {
      for (const [t, a] of p.owned) if (a === account) p.owned.delete(t);
      p.owned.set(c.thirdId, account);
    }
  }

  private department(c: Change): void {
    const p = this.p;
    if (c.op === 'create') {
      const id = this.newId();
      p.departments.push({ id, parent_id: this.value(c.fields.parent_id) || 'root', name: this.value(c.fields.name), path: '', depth: 0, sort_order: Number(c.fields.sort_order ?? 0), third_department_id: this.value(c.fields.third_department_id), member_count: 0, metadata: (c.fields.metadata as Record<string, unknown>) ?? {}, status: 'active', updated_at: iso(HISTORY_START) });
      this.created.set(c.id, id);
    } else {
      const d = p.departments.find((x) => x.id === this.target(c));
      if (!d || !c.request) return;
      if (c.request.method === 'DELETE') d.status = 'deleted';
      else for (const [k, v] of Object.entries(c.request.body ?? {})) (d as unknown as Record<string, unknown>)[k] = k === 'metadata' ? v : k === 'sort_order' ? Number(v) : this.value(v);
    }
    pathsOf(p.departments);
  }

  private position(c: Change): void {
    const p = this.p;
    if (c.op === 'create') {
      const id = this.newId();
      p.positions.push({ id, name: this.value(c.fields.name), description: this.value(c.fields.description), sort_order: Number(c.fields.sort_order ?? 0), third_position_id: this.value(c.fields.third_position_id), is_system: false, member_count: 0, agent_count: 0, metadata: (c.fields.metadata as Record<string, unknown>) ?? {}, status: 'active', updated_at: iso(HISTORY_START) });
      this.created.set(c.id, id);
      return;
    }
    const x = p.positions.find((y) => y.id === this.target(c));
    if (!x || !c.request) return;
    if (c.request.method === 'DELETE') x.status = 'deleted';
    else for (const [k, v] of Object.entries(c.request.body ?? {})) (x as unknown as Record<string, unknown>)[k] = k === 'metadata' ? v : k === 'sort_order' ? Number(v) : this.value(v);
  }
}

/** Paths and depths from the parents (the platform computes them). */
function pathsOf(departments: PlatformDepartment[]): void {
  const byId = new Map(departments.map((d) => [d.id, d]));
  for (const d of departments) {
    const names: string[] = [];
    let cur: PlatformDepartment | undefined = d;
    for (let guard = 0; cur && guard < 50; guard++) {
      names.unshift(cur.name);
      cur = cur.parent_id === '' ? undefined : byId.get(cur.parent_id);
    }
    d.path = `/${names.join('/')}`;
    d.depth = names.length - 1;
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The statuses a history's sources map to (for tests that read them). */
export const HISTORY_STATUSES: readonly DesiredMemberStatus[] = ['active', 'suspended', 'left'];
