/**
 * Turns one source's raw records into desired records and quarantine entries: field mapping, normalisation,
 * per-record checks, departments derived from a path field, and duplicate source ids within the source.
 * Pure: connectors feed it lookups and locations; it does no I/O.
 */
import type { DepartmentFieldsConfig, MemberFieldsConfig, PositionFieldsConfig } from './types.js';
import type { DesiredDepartment, DesiredMemberStatus, DesiredPosition, MemberStage, QuarantineEntry, RecordOrigin, SourceMember, SourceWarning } from '../domain/desired.js';
import type { EntityKind } from '../domain/entities.js';
import { alternativesOf, compileField, missingStatus, readEmail, type FieldReader, type Lookup, type TextProblem } from './fields.js';
import { listStage } from './list-stage.js';
import { FieldCoverage, type FieldGap } from './coverage.js';
import { compileScope, type Scope, type ScopeConfig } from './scope.js';
import { parseHrDate } from '../shared/dates.js';
import type { PhoneCache } from '../domain/phone-cache.js';
import { checkText, mapStatus, MAX_DESCRIPTION_LENGTH, MAX_ID_LENGTH, MAX_NAME_LENGTH, normalisePhone, parseSortOrder, type Problem } from './normalise.js';

export type { SourceMember } from '../domain/desired.js';

/** Everything one source yielded. */
export interface SourceBatch {
  source: string;
  departments: DesiredDepartment[];
  positions: DesiredPosition[];
  /** Where its members are staged (shared by the sources of one read), its place in config order, how many it gave. */
  stage: MemberStage;
  rank: number;
  memberCount: number;
  quarantine: QuarantineEntry[];
  /** Values dropped from records that were kept (an invalid phone under phone_policy: drop). */
  warnings: SourceWarning[];
  /** Which entities this source provides. */
  provided: Record<EntityKind, boolean>;
  /** entity.field names this source is authoritative for. */
  authoritative: string[];
  /** Records left out by the entity's include/exclude rules (before mapping and validation). */
  excluded?: Record<EntityKind, number>;
  /** Fields that matched nothing in any record read (only when read with `coverage`: sources check and preview). */
  fieldGaps?: FieldGap[];
}

/** Options of one source that affect mapping. */
export interface SourceMappingOptions {
  source: string;
  phoneRegion?: string | undefined;
  /** The config's timezone: (IANA) for dates without an offset; default UTC. */
  timezone?: string | undefined;
  /** An invalid phone: dropped with a warning (default), or the member quarantined. */
  phonePolicy?: 'drop' | 'quarantine' | undefined;
  /** Verdicts of earlier runs (src/domain/phone-cache.ts): a value seen before is not normalised again. */
  phoneCache?: PhoneCache | undefined;
  authoritativeFields?: string[];
  departments?: ({ fields: Partial<DepartmentFieldsConfig> } & ScopeConfig) | undefined;
  positions?: ({ fields: PositionFieldsConfig } & ScopeConfig) | undefined;
  members?: ({ fields: Partial<MemberFieldsConfig>; status_map?: Record<string, DesiredMemberStatus> | undefined; path_separator?: string; require_status?: boolean | string | undefined } & ScopeConfig) | undefined;
  /** Told where each field's value came from (`sources preview`); runs leave it out and their readers are untouched. */
  trace?: MappingTrace | undefined;
  /**
   * Where the members go (issue 42: a run's state DB, shared by its sources) and this source's place in config order;
   * absent: a stage of its own in the heap, rank 0.
   */
  stage?: MemberStage | undefined;
  rank?: number | undefined;
  /**
   * `sources check` and `sources preview` (issue 45): note which fields matched nothing in any record (`paths`: the
   * names are JSON field paths, probed step by step). Runs leave it out.
   */
  coverage?: { paths: boolean } | undefined;
}

/** Sees every value a mapped field reads, with the alternative of its spec (path, column, template) that gave it. */
export interface MappingTrace {
  /** `from` is the spec alternative whose value was taken, or the whole spec when none gave one (`text` is then ''). */
  read(entity: EntityKind, field: string, from: string, text: string | TextProblem): void;
}

/** Values a connector works out itself (LDAP: parent and department from the DN, disabled flags). */
export interface RecordOverrides {
  parent_source_id?: string;
  department_source_id?: string;
  /** The account is disabled in the source: suspended unless the mapped status says left. */
  disabled?: boolean;
  /** An end date the connector worked out (AD accountExpires, shadowExpire), unless end_date is mapped. */
  end_date?: { text: string; ms: number };
}

type Readers<K extends string> = { [key in K]?: FieldReader };

function compileAll<K extends string>(fields: Partial<Record<K, string | string[]>> | undefined, entity: EntityKind, trace: MappingTrace | undefined): Readers<K> {
  const out: Readers<K> = {};
  for (const [k, spec] of Object.entries(fields ?? {}) as [K, string | string[] | undefined][]) {
    if (spec !== undefined) out[k] = trace ? traced(compileField(spec), spec, entity, k, trace) : compileField(spec);
  }
  return out;
}

/**
 * `reader` that also tells `trace` which alternative of `spec` gave each value: the first alternative whose own
 * text is the one the reader gave (alternatives before it were empty, or it would have been theirs). Built only
 * with a trace, so the mapping's readers without one are the compiled ones as they were.
 */
function traced(reader: FieldReader, spec: string | string[], entity: EntityKind, field: string, trace: MappingTrace): FieldReader {
  const alternatives = Array.isArray(spec) ? spec.map((s) => [s, compileField(s)] as const) : [];
  const whole = Array.isArray(spec) ? spec.join(' | ') : spec;
  const text = (lookup: Lookup): string | TextProblem => {
    const t = reader.text(lookup);
    let from = whole;
    const wanted = typeof t === 'string' ? t : t.problem;
    if (wanted !== '') {
      for (const [s, r] of alternatives) {
        const a = r.text(lookup);
        if ((typeof a === 'string' ? a : a.problem) === wanted) {
          from = s;
          break;
        }
      }
    }
    trace.read(entity, field, from, t);
    return t;
  };
  return { names: reader.names, text, read: (lookup) => toResult(text(lookup)) };
}

/** One reader per alternative of a member field read alternative by alternative (phone, e-mail), each traced when `trace` is given. */
function memberAlternatives(spec: string | string[] | undefined, field: 'phone' | 'email', trace: MappingTrace | undefined): FieldReader[] {
  if (trace === undefined || spec === undefined) return alternativesOf(spec);
  return (Array.isArray(spec) ? spec : [spec]).map((f) => traced(compileField(f), f, 'members', field, trace));
}

const toResult = (t: string | TextProblem) => (typeof t === 'string' ? { ok: true as const, value: t } : t);

/** Thrown inside mapping to set a record aside; not an Error, so no stack trace is captured per bad record. */
class Reject {
  constructor(readonly problem: Problem) {}
}

const reject = (reason: string, message: string): never => {
  throw new Reject({ reason, message });
};

const MAX_SHARED_VALUES = 20_000;

const NO_OVERRIDES: RecordOverrides = Object.freeze({});

/**
 * A member record as a literal (the key order every reader sees: source_id, display_name, origin, email, phone,
 * title, department_source_id, status); the usual member has them all: one literal, no property store grown field
 * by field.
 */
function sourceMember(source_id: string, display_name: string, origin: RecordOrigin, email: string | undefined, phone: string | undefined, title: string | undefined, dept: string | undefined, status: DesiredMemberStatus | undefined): SourceMember {
  if (email !== undefined && phone !== undefined && title !== undefined && dept !== undefined && status !== undefined) return { source_id, display_name, origin, email, phone, title, department_source_id: dept, status };
  const rec: SourceMember = { source_id, display_name, origin };
  if (email !== undefined) rec.email = email;
  if (phone !== undefined) rec.phone = phone;
  if (title !== undefined) rec.title = title;
  if (dept !== undefined) rec.department_source_id = dept;
  if (status !== undefined) rec.status = status;
  return rec;
}

/** Collects one source's records; call `finish()` once every record was added. */
export class SourceCollector {
  private readonly dept: Readers<keyof DepartmentFieldsConfig>;
  private readonly pos: Readers<keyof PositionFieldsConfig>;
  private readonly mem: Readers<keyof MemberFieldsConfig>;
  private readonly departments: DesiredDepartment[] = [];
  private readonly positions: DesiredPosition[] = [];
  /** Where the members go as they are mapped (repeated ids and contacts are found there, once all are read). */
  private readonly stage: MemberStage;
  private readonly rank: number;
  private memberCount = 0;
  private readonly derived = new Map<string, DesiredDepartment>();
  /** Positions derived from members' position and position_name (issue 45). */
  private readonly derivedPositions = new Map<string, DesiredPosition>();
  private readonly quarantine: QuarantineEntry[] = [];
  private readonly warnings: SourceWarning[] = [];
  /** One reader per alternative of the phone field: the first VALID value wins, not the first non-empty one. */
  private readonly phoneReaders: FieldReader[];
  /** The alternatives of the e-mail field: the first is the e-mail, later ones fallbacks (fields.ts readEmail). */
  private readonly emailReaders: FieldReader[];
  private readonly provided: Record<EntityKind, boolean> = { departments: false, positions: false, members: false };
  private readonly statusMap: Record<string, DesiredMemberStatus> | undefined;
  private readonly separator: string;
  private readonly sharedValues = new Map<string, string>();
  private readonly scopes: Record<EntityKind, Scope | undefined>;
  private readonly excluded: Record<EntityKind, number> = { departments: 0, positions: 0, members: 0 };
  /** Which fields found values (sources check and preview only). */
  private readonly coverage: FieldCoverage | undefined;

  constructor(private readonly opts: SourceMappingOptions) {
    this.stage = opts.stage ?? listStage();
    this.rank = opts.rank ?? 0;
    this.dept = compileAll(opts.departments?.fields, 'departments', opts.trace);
    this.pos = compileAll(opts.positions?.fields, 'positions', opts.trace);
    this.mem = compileAll(opts.members?.fields, 'members', opts.trace);
    this.phoneReaders = memberAlternatives(opts.members?.fields.phone, 'phone', opts.trace);
    this.emailReaders = memberAlternatives(opts.members?.fields.email, 'email', opts.trace);
    this.scopes = { departments: compileScope(opts.departments), positions: compileScope(opts.positions), members: compileScope(opts.members) };
    this.statusMap = opts.members?.status_map;
    this.separator = opts.members?.path_separator ?? '/';
    if (opts.coverage) {
      const fields = (r: Readers<string>) => Object.entries(r).map(([k, reader]): [string, string[]] => [k, reader!.names]);
      this.coverage = new FieldCoverage({ departments: fields(this.dept), positions: fields(this.pos), members: fields(this.mem) }, opts.coverage.paths);
    }
    if (opts.departments) this.provided.departments = true;
    if (opts.positions) this.provided.positions = true;
    if (opts.members) {
      this.provided.members = true;
      // Departments (and positions) derived from the members: a path, or a code with its name (issue 45).
      if (opts.members.fields.department_path || opts.members.fields.department_name) this.provided.departments = true;
      if (opts.members.fields.position_name) this.provided.positions = true;
    }
  }

  /** Every name the mapping and the scope of `entity` read (columns, attributes, paths). */
  fieldNames(entity: EntityKind): string[] {
    const readers: Readers<string> = entity === 'departments' ? this.dept : entity === 'positions' ? this.pos : this.mem;
    return [...new Set([...Object.values(readers).flatMap((r) => r!.names), ...(this.scopes[entity]?.names ?? []).map(([, n]) => n)])];
  }

  /** Every mapped field of `entity` with the names it reads, for header checks. */
  fieldNamesByField(entity: EntityKind): [string, string[]][] {
    const readers: Readers<string> = entity === 'departments' ? this.dept : entity === 'positions' ? this.pos : this.mem;
    return Object.entries(readers).map(([k, r]) => [k, r!.names]);
  }

  /** The names the include/exclude rules of `entity` read, with their config keys (`exclude[0].field`). */
  scopeNames(entity: EntityKind): [string, string][] {
    return this.scopes[entity]?.names ?? [];
  }

  /** True (and counted) when the entity's include/exclude rules leave this record out. */
  private outOfScope(entity: EntityKind, lookup: Lookup): boolean {
    const scope = this.scopes[entity];
    if (scope === undefined || scope.takes(lookup)) return false;
    this.excluded[entity]++;
    return true;
  }

  /** Adds a quarantine entry the connector found itself (a malformed record). */
  addProblem(entity: EntityKind, location: string, problem: Problem, sourceId?: string): void {
    this.quarantine.push({ source: this.opts.source, entity, ...(sourceId ? { source_id: sourceId } : {}), location, reason: problem.reason, message: problem.message });
  }

  private text(readers: Readers<string>, field: string, lookup: Lookup): string {
    const r = readers[field];
    if (!r) return '';
    const t = r.text(lookup);
    if (typeof t !== 'string') return reject(t.reason ?? 'invalid_value', `${field}: ${t.problem}`);
    return t.trim();
  }

  private id(readers: Readers<string>, lookup: Lookup): string {
    const id = this.text(readers, 'id', lookup);
    if (id === '') reject('missing_id', `no source id (the id field ${describe(readers.id)} is empty or missing)`);
    const p = checkText('source id', id, MAX_ID_LENGTH);
    if (p) throw new Reject(p);
    return id;
  }

  /** A name may be empty here (another source may give it); the merge checks that one source did. */
  private name(readers: Readers<string>, field: string, lookup: Lookup): string {
    const name = this.text(readers, field, lookup);
    if (name === '') return '';
    const p = checkText(field, name, MAX_NAME_LENGTH);
    if (p) throw new Reject(p);
    return name;
  }

  private optional(readers: Readers<string>, field: string, lookup: Lookup, max = MAX_NAME_LENGTH): string {
    const v = this.text(readers, field, lookup);
    if (v !== '') {
      const p = checkText(field, v, max);
      if (p) throw new Reject(p);
    }
    return v;
  }

  /** Quarantines a record whose mapping threw a Reject (rethrows anything else). No closure per record: the add* methods catch. */
  private rejected(err: unknown, entity: EntityKind, location: string, lookup: Lookup, readers: Readers<string>): void {
    if (!(err instanceof Reject)) throw err;
    // Name the record by its id when it has a usable one, so dependants and the reconcile can find it.
    let sourceId: string | undefined;
    if (readers.id) {
      const t = readers.id.read(lookup);
      if (t.ok && t.value.trim() !== '' && t.value.length <= MAX_ID_LENGTH) sourceId = t.value.trim();
    }
    this.addProblem(entity, location, err.problem, sourceId);
  }

  /** Maps one raw department. */
  addDepartment(lookup: Lookup, location: string, overrides: RecordOverrides = {}): void {
    if (this.scopes.departments !== undefined && this.outOfScope('departments', lookup)) return;
    this.coverage?.record('departments', lookup);
    try {
      const d: DesiredDepartment = { source_id: this.id(this.dept, lookup), name: this.name(this.dept, 'name', lookup), origin: { source: this.opts.source, location } };
      const parent = overrides.parent_source_id ?? this.optional(this.dept, 'parent', lookup, MAX_ID_LENGTH);
      if (parent !== '') d.parent_source_id = parent;
      const so = this.text(this.dept, 'sort_order', lookup);
      if (so !== '') {
        const r = parseSortOrder(so);
        if ('reason' in r) throw new Reject(r);
        d.sort_order = r.value;
      }
      this.departments.push(d);
    } catch (err) {
      this.rejected(err, 'departments', location, lookup, this.dept);
    }
  }

  /** Maps one raw position. */
  addPosition(lookup: Lookup, location: string): void {
    if (this.scopes.positions !== undefined && this.outOfScope('positions', lookup)) return;
    this.coverage?.record('positions', lookup);
    try {
      const p: DesiredPosition = { source_id: this.id(this.pos, lookup), name: this.name(this.pos, 'name', lookup), origin: { source: this.opts.source, location } };
      const desc = this.optional(this.pos, 'description', lookup, MAX_DESCRIPTION_LENGTH);
      if (desc !== '') p.description = desc;
      const so = this.text(this.pos, 'sort_order', lookup);
      if (so !== '') {
        const r = parseSortOrder(so);
        if ('reason' in r) throw new Reject(r);
        p.sort_order = r.value;
      }
      this.positions.push(p);
    } catch (err) {
      this.rejected(err, 'positions', location, lookup, this.pos);
    }
  }

  /** Maps one raw member. */
  addMember(lookup: Lookup, location: string, overrides: RecordOverrides = NO_OVERRIDES): void {
    this.mapMember(lookup, location, -1, overrides);
  }

  /** Maps one raw member found at `line` of a file whose locations start with `at` (`members.csv:`). */
  addMemberAt(lookup: Lookup, at: string, line: number, overrides: RecordOverrides = NO_OVERRIDES): void {
    this.mapMember(lookup, at, line, overrides);
  }

  /** addMember (`line` -1: `place` is the location) or addMemberAt (`place` is the prefix of `line`). */
  private mapMember(lookup: Lookup, place: string, line: number, overrides: RecordOverrides): void {
    const m = this.mem;
    if (this.scopes.members !== undefined && this.outOfScope('members', lookup)) return;
    this.coverage?.record('members', lookup);
    try {
      // Departments derived from a path come first: a member quarantined for another reason still proves its department exists.
      let department = overrides.department_source_id ?? '';
      if (m.department_path && overrides.department_source_id === undefined) department = this.derivePath(this.optional(m, 'department_path', lookup, 4 * MAX_NAME_LENGTH), line < 0 ? place : place + line);
      if (department === '' && m.department_name && overrides.department_source_id === undefined) department = this.deriveNamed(lookup, line < 0 ? place : place + line);
      if (m.position_name) this.derivePosition(lookup, line < 0 ? place : place + line);
      const source_id = this.id(m, lookup);
      const display_name = this.name(m, 'display_name', lookup);
      // The values first (checked in this order, so the first problem found is the one reported), the record after.
      const emailRead = readEmail(this.emailReaders, lookup);
      if (emailRead !== undefined && 'reason' in emailRead) throw new Reject(emailRead);
      const email = emailRead?.value;
      const phoneResult = this.phone(lookup);
      let phone: string | undefined;
      // Noted now, kept only if the record is: a member quarantined for another reason has nothing dropped.
      let droppedPhone: Problem | undefined;
      if (typeof phoneResult === 'string') phone = phoneResult;
      else if (phoneResult !== undefined) {
        if (this.opts.phonePolicy === 'quarantine') throw new Reject(phoneResult);
        droppedPhone = phoneResult;
      }
      const titleText = this.optional(m, 'title', lookup);
      if (department === '' && m.department && overrides.department_source_id === undefined) department = this.optional(m, 'department', lookup, MAX_ID_LENGTH);
      const status = this.memberStatus(lookup, overrides);
      const title = titleText !== '' ? this.shared(titleText) : undefined;
      const dept = department !== '' ? this.shared(department) : undefined;
      const location = line < 0 ? place : place + line;
      const rec = sourceMember(source_id, display_name, { source: this.opts.source, location }, email, phone, title, dept, status);
      this.date(m, 'start_date', lookup, rec);
      const endOverride = overrides.end_date;
      if (endOverride !== undefined && !m.end_date) {
        rec.end_date = endOverride.text;
        rec.end_at = endOverride.ms;
      } else this.date(m, 'end_date', lookup, rec);
      this.stage.add(this.rank, rec);
      this.memberCount += 1;
      if (droppedPhone) {
        this.warnings.push({ source: this.opts.source, entity: 'members', source_id, location, code: 'invalid_phone_dropped', message: `${droppedPhone.message}: phone dropped, the member is kept without it (phone_policy: drop)`, problem: droppedPhone.message });
      }
    } catch (err) {
      this.rejected(err, 'members', line < 0 ? place : place + line, lookup, m);
    }
  }

  /** The member's mapped status (undefined: the source does not say), the connector's `disabled` flag applied. */
  private memberStatus(lookup: Lookup, overrides: RecordOverrides): DesiredMemberStatus | undefined {
    const m = this.mem;
    const statusText = m.status ? this.text(m, 'status', lookup) : '';
    if (statusText === '' && m.status && this.opts.members?.require_status) reject('missing_status', missingStatus(m.status.names, this.opts.members.require_status));
    let status: DesiredMemberStatus | undefined;
    // An empty status says nothing (another source, or the default active, decides) unless status_map maps "".
    if (m.status && (statusText !== '' || this.statusMap?.[''] !== undefined)) {
      const r = mapStatus(statusText, this.statusMap);
      if ('reason' in r) throw new Reject(r);
      status = r.value;
    }
    if (overrides.disabled && status !== 'left') status = 'suspended';
    else if (overrides.disabled === false && status === undefined) status = 'active';
    return status;
  }

  /**
   * The member's phone: the first alternative of the phone field whose value is a valid number (E.164), undefined
   * when none gives a value, or the problem of the first invalid value when values were given but none is valid.
   */
  private phone(lookup: Lookup): string | Problem | undefined {
    let invalid: Problem | undefined;
    for (const reader of this.phoneReaders) {
      const t = reader.text(lookup);
      if (typeof t !== 'string') {
        invalid ??= { reason: 'invalid_value', message: `phone: ${t.problem}` };
        continue;
      }
      const raw = t.trim();
      if (raw === '') continue;
      const p = checkText('phone', raw, MAX_NAME_LENGTH);
      if (p) {
        invalid ??= p;
        continue;
      }
      const r = normalisePhone(raw, this.opts.phoneRegion, this.opts.phoneCache);
      if ('reason' in r) invalid ??= r;
      else return r.value;
    }
    return invalid;
  }

  /** Reads start_date / end_date: the text as given and the instant (dates without an offset in `timezone`). */
  private date(m: Readers<string>, field: 'start_date' | 'end_date', lookup: Lookup, rec: SourceMember): void {
    if (!m[field]) return;
    const text = this.text(m, field, lookup);
    if (text === '') return;
    const r = parseHrDate(text, this.opts.timezone ?? 'UTC');
    if ('none' in r) return;
    if ('problem' in r) throw new Reject({ reason: 'invalid_date', message: `${field}: ${r.problem}` });
    if (field === 'start_date') {
      rec.start_date = r.text;
      rec.start_at = r.ms;
    } else {
      rec.end_date = r.text;
      rec.end_at = r.ms;
    }
  }

  /**
   * One copy of a value that many members repeat (titles, department ids): hundreds of thousands of members hold
   * a few thousand distinct strings instead of one string each. Bounded, so unique values cannot grow it forever.
   */
  private shared(value: string): string {
    const known = this.sharedValues.get(value);
    if (known !== undefined) return known;
    if (this.sharedValues.size < MAX_SHARED_VALUES) this.sharedValues.set(value, value);
    return value;
  }

  /**
   * A department given by its code and its name (`department` and `department_name`, issue 45): derived with the
   * code as its id, so a renamed department in HR is renamed on the platform, not created anew. The first name read
   * for a code names it. Returns the code ('' when the record has none).
   */
  private deriveNamed(lookup: Lookup, location: string): string {
    const id = this.optional(this.mem, 'department', lookup, MAX_ID_LENGTH);
    if (id === '') return '';
    const name = this.optional(this.mem, 'department_name', lookup);
    if (name !== '' && !this.derived.has(id)) this.derived.set(id, { source_id: id, name, origin: { source: this.opts.source, location } });
    return id;
  }

  /** A position given by its code and its name (`position` and `position_name`, issue 45), derived from the member. */
  private derivePosition(lookup: Lookup, location: string): void {
    const id = this.optional(this.mem, 'position', lookup, MAX_ID_LENGTH);
    if (id === '' || this.derivedPositions.has(id)) return;
    const name = this.optional(this.mem, 'position_name', lookup);
    if (name !== '') this.derivedPositions.set(id, { source_id: id, name, origin: { source: this.opts.source, location } });
  }

  /** Adds the departments of a path ("Engineering/Platform/SRE") and returns the last one's id. */
  private derivePath(path: string, location: string): string {
    const parts = path.split(this.separator).map((s) => s.trim()).filter((s) => s !== '');
    let parent: string | undefined;
    for (let i = 0; i < parts.length; i++) {
      const id = parts.slice(0, i + 1).join(this.separator);
      if (!this.derived.has(id)) {
        const d: DesiredDepartment = { source_id: id, name: parts[i]!, origin: { source: this.opts.source, location } };
        if (parent !== undefined) d.parent_source_id = parent;
        this.derived.set(id, d);
      }
      parent = id;
    }
    return parent ?? '';
  }

  /**
   * Quarantines repeated department and position ids (every copy: which one is right cannot be known) and returns the
   * batch. Its members are staged; repeated member ids are found there (desired/settle-members.ts).
   */
  finish(): SourceBatch {
    const explicit = new Set(this.departments.map((d) => d.source_id));
    const derived = [...this.derived.values()].filter((d) => !explicit.has(d.source_id));
    const explicitPositions = new Set(this.positions.map((p) => p.source_id));
    const derivedPositions = [...this.derivedPositions.values()].filter((p) => !explicitPositions.has(p.source_id));
    return {
      source: this.opts.source,
      departments: this.dropDuplicates('departments', [...this.departments, ...derived]),
      positions: this.dropDuplicates('positions', derivedPositions.length > 0 ? [...this.positions, ...derivedPositions] : this.positions),
      stage: this.stage,
      rank: this.rank,
      memberCount: this.memberCount,
      quarantine: this.quarantine,
      warnings: this.warnings,
      provided: this.provided,
      authoritative: this.opts.authoritativeFields ?? [],
      excluded: { ...this.excluded },
      ...(this.coverage ? { fieldGaps: this.coverage.gaps() } : {}),
    };
  }

  private dropDuplicates<T extends { source_id: string; origin?: { location: string } }>(entity: EntityKind, records: T[]): T[] {
    const seen = new Set<string>();
    let dupIds: Set<string> | undefined;
    for (const r of records) {
      if (seen.has(r.source_id)) (dupIds ??= new Set()).add(r.source_id);
      else seen.add(r.source_id);
    }
    if (!dupIds) return records;
    const locations = new Map<string, string[]>();
    for (const r of records) if (dupIds.has(r.source_id)) locations.set(r.source_id, [...(locations.get(r.source_id) ?? []), r.origin!.location]);
    const out: T[] = [];
    for (const r of records) {
      const locs = locations.get(r.source_id);
      if (!locs) {
        out.push(r);
        continue;
      }
      const others = locs.filter((l) => l !== r.origin!.location);
      this.addProblem(entity, r.origin!.location, { reason: 'duplicate_id', message: `source id "${r.source_id}" appears ${locs.length} times in this source (also at ${others.join(', ')})` }, r.source_id);
    }
    return out;
  }
}

function describe(r: FieldReader | undefined): string {
  return r ? r.names.join(', ') : '(unmapped)';
}
