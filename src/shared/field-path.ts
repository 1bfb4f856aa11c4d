/**
 * Field paths into JSON records: one small grammar, compiled once per path and walked per record.
 *
 *   path      = step *( "." step / "[" selector "]" )
 *   step      = name / quoted
 *   name      = 1*( any character but . [ ] " )
 *   quoted    = DQUOTE *( any character but " and \ / "\" any character ) DQUOTE
 *   selector  = index / filter
 *   index     = [ "-" ] 1*DIGIT                 ; an array element, from 0; -1 is the last, -2 the one before
 *   filter    = [ ( "first" / "last" ) ":" ] condition *( "," condition )
 *                                              ; the first (or last) element whose every condition holds
 *   condition = key "=" value                   ; the element's value at key, as text, equals value
 *   key       = part *( "." part )              ; a nested key of the element (typeCode.codeValue)
 *   part      = quoted / 1*( any character but . = ] , [ )
 *   value     = quoted / *( any character but ] and , )
 *
 * Examples: `department.id`, `"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User".department`,
 * `businessPhones[0]`, `emails[primary=true].value`, `units[typeCode.codeValue=Department].nameCode.codeValue`,
 * `terminations[last:active=true].effective_date`, `jobs[-1].title`. A name step on an array with a numeric name
 * indexes it (`items.0.name`, the dotted form of before). Pure: no I/O.
 */

/** One condition of a filter: the element's value at `key` (a nested key: its names in order) equals `value`. */
export interface FilterCondition {
  key: string[];
  value: string;
}

/** One step of a compiled path. */
export type PathStep =
  | { kind: 'key'; key: string }
  | { kind: 'index'; index: number }
  | { kind: 'filter'; where: FilterCondition[]; last: boolean };

/** A filter step of one condition on a top-level key of the element (`[type=work]`). */
export function filterStep(key: string, value: string, last = false): PathStep {
  return { kind: 'filter', where: [{ key: [key], value }], last };
}

/** A path that does not follow the grammar. */
export class PathSyntaxError extends Error {
  constructor(
    readonly path: string,
    readonly at: number,
    detail: string,
  ) {
    super(`invalid field path ${JSON.stringify(path)} at character ${at + 1}: ${detail}`);
    this.name = 'PathSyntaxError';
  }
}

/** A value of the wrong JSON type met while walking a path: the record is quarantined, never coerced. */
export class WrongType {
  constructor(
    /** The part of the path that led to the value (`dept`, `emails[0]`). */
    readonly at: string,
    /** What was found: `a string`, `an array`, ... */
    readonly found: string,
    /** What the path needs there: `an object`, `an array`, ... */
    readonly expected: string,
  ) {}

  /** `dept is a string, expected an object`. */
  get message(): string {
    return `${this.at} is ${this.found}, expected ${this.expected}`;
  }
}

/** How a JSON value is named in messages. */
export function jsonTypeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return typeof v;
  }
}

/** The reading position of one parse: the text and where the next character is. */
class Cursor {
  i = 0;
  constructor(readonly path: string) {}

  get done(): boolean {
    return this.i >= this.path.length;
  }

  /** The character at the cursor (a method, not a getter: a check of it must not narrow the next read). */
  ch(): string | undefined {
    return this.path[this.i];
  }

  fail(at: number, detail: string): never {
    throw new PathSyntaxError(this.path, at, detail);
  }

  /** A quoted name (the cursor is on its opening quote), unescaped. */
  quoted(): string {
    let out = '';
    this.i++;
    while (!this.done && this.ch() !== '"') {
      if (this.ch() === '\\') {
        this.i++;
        if (this.done) break;
      }
      out += this.ch();
      this.i++;
    }
    if (this.done) this.fail(this.path.length - 1, 'a quoted name is not closed');
    this.i++;
    return out;
  }

  /** Unquoted text up to (not including) the first character of `stop`. */
  bare(stop: string): string {
    const start = this.i;
    while (!this.done && !stop.includes(this.ch()!)) this.i++;
    return this.path.slice(start, this.i);
  }
}

/** A name step of the path (quoted or bare). */
function nameStep(cur: Cursor): PathStep {
  if (cur.ch() === '"') return { kind: 'key', key: cur.quoted() };
  const start = cur.i;
  const key = cur.bare('.[]"');
  if (key === '') cur.fail(start, cur.done ? 'a name is missing at the end' : `a name is missing before ${JSON.stringify(cur.ch())}`);
  return { kind: 'key', key };
}

/** The key of a filter condition: names joined by dots. */
function conditionKey(cur: Cursor, open: number): string[] {
  const parts: string[] = [];
  for (;;) {
    const start = cur.i;
    const part = cur.ch() === '"' ? cur.quoted() : cur.bare('.=],[');
    if (part === '' && cur.path[start] !== '"') {
      if (cur.done) cur.fail(open, 'a "[" is not closed');
      cur.fail(start, `a key is missing before ${JSON.stringify(cur.ch())}`);
    }
    parts.push(part);
    if (cur.ch() !== '.') return parts;
    cur.i++;
  }
}

/** The selector after "[" (the cursor is just past it): an index, or a filter of one or more conditions. */
function selector(cur: Cursor, open: number): PathStep {
  const index = /^(-?\d+)\]/.exec(cur.path.slice(cur.i));
  if (index) {
    cur.i += index[0].length;
    return { kind: 'index', index: Number(index[1]) };
  }
  let last = false;
  const which = /^(first|last):/.exec(cur.path.slice(cur.i));
  if (which) {
    last = which[1] === 'last';
    cur.i += which[0].length;
  }
  const where: FilterCondition[] = [];
  for (;;) {
    while (cur.ch() === ' ') cur.i++;
    const keyAt = cur.i;
    const key = conditionKey(cur, open);
    if (cur.ch() === ']' && where.length === 0 && !which) {
      const shown = cur.path.slice(keyAt, cur.i);
      cur.fail(open, `[${shown}] is neither an index (a number from 0) nor a filter (key=value)`);
    }
    if (cur.ch() !== '=') cur.fail(open, cur.done ? 'a "[" is not closed' : `a condition needs key=value, found ${JSON.stringify(cur.ch())}`);
    cur.i++;
    const value = cur.ch() === '"' ? cur.quoted() : cur.bare('],');
    where.push({ key, value });
    if (cur.ch() === ',') {
      cur.i++;
      continue;
    }
    if (cur.ch() !== ']') cur.fail(open, 'a "[" is not closed');
    cur.i++;
    return { kind: 'filter', where, last };
  }
}

/** Parses a path into its steps; throws PathSyntaxError. The empty path has no steps (the value itself). */
export function parsePath(path: string): PathStep[] {
  const steps: PathStep[] = [];
  const cur = new Cursor(path);
  if (path.length === 0) return steps;
  if (path[0] !== '[') steps.push(nameStep(cur));
  while (!cur.done) {
    const c = cur.ch()!;
    if (c === '.') {
      cur.i++;
      steps.push(nameStep(cur));
    } else if (c === '[') {
      const open = cur.i;
      cur.i++;
      steps.push(selector(cur, open));
    } else {
      cur.fail(cur.i, `unexpected ${JSON.stringify(c)} (quote names that contain . [ ] or ")`);
    }
  }
  return steps;
}

const quote = (k: string) => `"${k.replace(/["\\]/g, (c) => `\\${c}`)}"`;

/** One selector written back: `[2]`, `[-1]`, `[type=work]`, `[last:a.b=1,c="x]"]`. */
function formatSelector(step: Exclude<PathStep, { kind: 'key' }>): string {
  if (step.kind === 'index') return `[${step.index}]`;
  const part = (k: string) => (k === '' || /[.=\],[":]/.test(k) || /^\s/.test(k) ? quote(k) : k);
  const value = (v: string) => (/[\],]/.test(v) || v.startsWith('"') ? quote(v) : v);
  const conditions = step.where.map((w) => `${w.key.map(part).join('.')}=${value(w.value)}`).join(',');
  return `[${step.last ? 'last:' : ''}${conditions}]`;
}

/** Writes steps back as a path (the canonical form: names quoted only when they must be). */
export function formatPath(steps: readonly PathStep[]): string {
  let out = '';
  for (let s = 0; s < steps.length; s++) {
    const step = steps[s]!;
    if (step.kind === 'key') out += (s === 0 ? '' : '.') + (step.key === '' || /[.[\]"]/.test(step.key) ? quote(step.key) : step.key);
    else out += formatSelector(step);
  }
  return out;
}

/** A compiled path: `get` walks one record. */
export interface CompiledPath {
  path: string;
  steps: PathStep[];
  /**
   * The value at the path; undefined when absent (a missing key, a null on the way, no element matching a filter);
   * a WrongType when a step meets a value it cannot walk (a string where an object is needed).
   */
  get(root: unknown): unknown;
}

const scalarText = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined);

/** The value at a condition's nested key of one element (objects by key; an array by a numeric name). */
function valueAt(el: unknown, key: readonly string[]): unknown {
  let cur = el;
  for (let i = 0; i < key.length; i++) {
    if (cur === null || typeof cur !== 'object') return undefined;
    const k = key[i]!;
    if (Array.isArray(cur)) cur = /^\d+$/.test(k) ? cur[Number(k)] : undefined;
    else cur = Object.prototype.hasOwnProperty.call(cur, k) ? (cur as Record<string, unknown>)[k] : undefined;
  }
  return cur;
}

/** True when every condition of a filter holds for the element (an object). */
function matches(el: unknown, where: readonly FilterCondition[]): boolean {
  if (el === null || typeof el !== 'object' || Array.isArray(el)) return false;
  for (let i = 0; i < where.length; i++) if (scalarText(valueAt(el, where[i]!.key)) !== where[i]!.value) return false;
  return true;
}

/** The element a selector picks from an array; undefined when none. */
function select(arr: readonly unknown[], step: Exclude<PathStep, { kind: 'key' }>): unknown {
  if (step.kind === 'index') return step.index < 0 ? arr[arr.length + step.index] : arr[step.index];
  if (step.last) {
    for (let i = arr.length - 1; i >= 0; i--) if (matches(arr[i], step.where)) return arr[i];
    return undefined;
  }
  for (let i = 0; i < arr.length; i++) if (matches(arr[i], step.where)) return arr[i];
  return undefined;
}

/** Compiles a path (throws PathSyntaxError). */
export function compilePath(path: string): CompiledPath {
  const steps = parsePath(path);
  const get = (root: unknown): unknown => {
    let cur = root;
    for (let s = 0; s < steps.length; s++) {
      if (cur === undefined || cur === null) return undefined;
      const step = steps[s]!;
      if (step.kind === 'key') {
        if (Array.isArray(cur)) {
          // The dotted form of an index (`items.0.name`).
          if (/^\d+$/.test(step.key)) {
            cur = cur[Number(step.key)];
            continue;
          }
          return new WrongType(formatPath(steps.slice(0, s)) || '(the record)', 'an array', `an object with "${step.key}"`);
        }
        if (typeof cur !== 'object') return new WrongType(formatPath(steps.slice(0, s)) || '(the record)', jsonTypeOf(cur), `an object with "${step.key}"`);
        cur = Object.prototype.hasOwnProperty.call(cur, step.key) ? (cur as Record<string, unknown>)[step.key] : undefined;
      } else {
        if (!Array.isArray(cur)) return new WrongType(formatPath(steps.slice(0, s)) || '(the record)', jsonTypeOf(cur), 'an array');
        cur = select(cur, step);
      }
    }
    return cur;
  };
  return { path, steps, get };
}

const cache = new Map<string, CompiledPath>();

/** A compiled path from a small cache: the names a mapping reads repeat for every record. */
export function cachedPath(path: string): CompiledPath {
  let c = cache.get(path);
  if (c === undefined) {
    c = compilePath(path);
    if (cache.size < 10_000) cache.set(path, c);
  }
  return c;
}
