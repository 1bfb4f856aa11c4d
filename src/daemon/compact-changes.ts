/**
 * The changes of a saved plan as `apply FILE` keeps them (issue 31 point 2): parsed one by one from the file, each
 * with its repeated parts shared instead of copied. A request body equal to the change's fields is the fields object
 * (a create's body is its fields), identical dependency lists, PlanRefs and department paths are one object each,
 * and the words every change repeats (entity, operation, reason, method, short field values) one string each. The
 * changes read the same: only identity is shared, and the applier never writes into a change.
 */
import type { Change, PlanValue } from '../domain/index.js';
import { canonicalJson } from '../shared/json-chunks.js';

/** Strings longer than this are not interned (names, e-mails and descriptions are unique; words repeat). */
const INTERN_MAX_LENGTH = 48;
/** Distinct strings interned at most: past it, new ones are kept as read (the repeated ones come early). */
const INTERN_MAX_ENTRIES = 65_536;

/** Shares the repeated parts of the changes handed to `compact`. */
export class ChangeCompactor {
  private readonly strings = new Map<string, string>();
  private readonly shared = new Map<string, unknown>();

  /** One string for each repeated short string. */
  private word(s: string): string {
    if (s.length > INTERN_MAX_LENGTH) return s;
    const known = this.strings.get(s);
    if (known !== undefined) return known;
    if (this.strings.size < INTERN_MAX_ENTRIES) this.strings.set(s, s);
    return s;
  }

  /** One object for each repeated small JSON value (a PlanRef, a dependency list, a paths record), by its text. */
  private one<T>(value: T): T {
    const key = JSON.stringify(value);
    const known = this.shared.get(key);
    if (known !== undefined) return known as T;
    if (this.shared.size < INTERN_MAX_ENTRIES) this.shared.set(key, value);
    return value;
  }

  /** A field value with its words interned and a PlanRef shared (other objects and arrays as they are). */
  private value(v: PlanValue): PlanValue {
    if (typeof v === 'string') return this.word(v);
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && typeof (v as { ref?: unknown }).ref === 'string') return this.one(v);
    return v;
  }

  private record(r: Record<string, PlanValue>): Record<string, PlanValue> {
    for (const k of Object.keys(r)) r[k] = this.value(r[k]!);
    return r;
  }

  /** `c` (as parsed, owned by the caller) with its repeated parts shared; the same object, changed in place. */
  compact(c: Change): Change {
    c.entity = this.word(c.entity) as Change['entity'];
    c.op = this.word(c.op) as Change['op'];
    c.reason = this.word(c.reason);
    c.fields = this.record(c.fields);
    if (c.before) c.before = this.record(c.before);
    if (c.request) {
      c.request.method = this.word(c.request.method) as NonNullable<Change['request']>['method'];
      c.request.path = this.word(c.request.path);
      const body = c.request.body;
      if (body) c.request.body = sameRecord(body, c.fields) ? c.fields : this.record(body);
    }
    c.dependsOn = this.one(c.dependsOn);
    if (c.paths) c.paths = this.one(c.paths);
    return c;
  }
}

/** True when two records of plan values have the same keys in the same order and equal values (as JSON). */
function sameRecord(a: Record<string, PlanValue>, b: Record<string, PlanValue>): boolean {
  const keys = Object.keys(a);
  const other = Object.keys(b);
  if (keys.length !== other.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (k !== other[i]) return false;
    const x = a[k];
    const y = b[k];
    if (x === y) continue;
    if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object' || JSON.stringify(x) !== JSON.stringify(y)) return false;
  }
  return true;
}

/**
 * True when `value` reads as JSON exactly as `parsed` (a value read from JSON): the same text once keys are sorted,
 * which is what the signature covers. Walked rather than written out: at a million changes the two texts of each,
 * and the sorted copies made to write them, were most of the garbage of loading a saved plan.
 */
export function sameJson(parsed: unknown, value: unknown): boolean {
  // A value with toJSON (a Date) is written as what it returns; NaN and the infinities as null.
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') return canonicalJson(parsed) === canonicalJson(value);
  if (typeof value === 'number' && !Number.isFinite(value)) return parsed === null;
  if (parsed === value) return true;
  if (parsed === null || value === null || typeof parsed !== 'object' || typeof value !== 'object') return false;
  if (Array.isArray(parsed) || Array.isArray(value)) {
    if (!Array.isArray(parsed) || !Array.isArray(value) || parsed.length !== value.length) return false;
    for (let i = 0; i < parsed.length; i++) if (!sameJson(parsed[i], written(value[i]) ?? null)) return false;
    return true;
  }
  const p = parsed as Record<string, unknown>;
  const v = value as Record<string, unknown>;
  let keys = 0;
  for (const k of Object.keys(v)) {
    const x = written(v[k]);
    if (x === undefined) continue;
    keys += 1;
    if (!Object.prototype.hasOwnProperty.call(p, k) || !sameJson(p[k], x)) return false;
  }
  return keys === Object.keys(p).length;
}

/** A value as JSON writes it inside an object: undefined when it is left out (undefined, a function, a symbol). */
function written(v: unknown): unknown {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol' ? undefined : v;
}

/**
 * The saved changes as `apply FILE` keeps them (issue 31 point 2): a parsed saved change whose signed (canonical)
 * text is exactly that of the change this run planned at the same place (sameJson) is that planned change, compact and already
 * held (same inputs make the same plan, so nearly always); any other is the parsed change, compacted. Either way the
 * change applied reads exactly as the signed file says.
 */
export class SavedChangeLoader {
  private readonly compactor = new ChangeCompactor();
  /** How many saved changes the planned ones stood in for, and how many were kept as parsed. */
  readonly counts = { planned: 0, parsed: 0 };

  constructor(private readonly planned: readonly Change[]) {}

  /** The change to apply for the saved change `parsed` at `index` (as read from the file). */
  take(parsed: Change, index: number): Change {
    const planned = this.planned[index];
    if (planned !== undefined && sameJson(parsed, planned)) {
      this.counts.planned += 1;
      return planned;
    }
    this.counts.parsed += 1;
    return this.compactor.compact(parsed);
  }
}
