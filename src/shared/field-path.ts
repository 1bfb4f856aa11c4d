/**
 * Field paths into JSON records: one small grammar, compiled once per path and walked per record.
 *
 *   path     = step *( "." step / "[" selector "]" )
 *   step     = name / quoted
 *   name     = 1*( any character but . [ ] " )
 *   quoted   = DQUOTE *( any character but " and \ / "\" any character ) DQUOTE
 *   selector = index / filter
 *   index    = 1*DIGIT                         ; an array element, from 0
 *   filter   = key "=" value                    ; the first element whose key, as text, equals value
 *   key      = name / quoted                    ; without "=" or "]" when unquoted
 *   value    = quoted / *( any character but "]" )
 *
 * Examples: `department.id`, `"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User".department`,
 * `businessPhones[0]`, `emails[primary=true].value`, `phoneNumbers[type=mobile].value`. A name step on an array
 * with a numeric name indexes it (`items.0.name`, the dotted form of before). Pure: no I/O.
 */

/** One step of a compiled path. */
export type PathStep = { kind: 'key'; key: string } | { kind: 'index'; index: number } | { kind: 'filter'; key: string; value: string };

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

/** Parses a path into its steps; throws PathSyntaxError. The empty path has no steps (the value itself). */
export function parsePath(path: string): PathStep[] {
  const steps: PathStep[] = [];
  let i = 0;
  const n = path.length;
  const quoted = (): string => {
    // path[i] is the opening quote
    let out = '';
    i++;
    while (i < n && path[i] !== '"') {
      if (path[i] === '\\') {
        i++;
        if (i >= n) break;
      }
      out += path[i];
      i++;
    }
    if (i >= n) throw new PathSyntaxError(path, n - 1, 'a quoted name is not closed');
    i++; // closing quote
    return out;
  };
  const bare = (stop: string): string => {
    const start = i;
    while (i < n && !stop.includes(path[i]!)) i++;
    return path.slice(start, i);
  };
  const step = () => {
    if (path[i] === '"') {
      steps.push({ kind: 'key', key: quoted() });
      return;
    }
    const start = i;
    const key = bare('.[]"');
    if (key === '') throw new PathSyntaxError(path, start, i >= n ? 'a name is missing at the end' : `a name is missing before ${JSON.stringify(path[i])}`);
    steps.push({ kind: 'key', key });
  };
  if (n === 0) return steps;
  if (path[0] !== '[') step();
  while (i < n) {
    const c = path[i]!;
    if (c === '.') {
      i++;
      step();
    } else if (c === '[') {
      const open = i;
      i++;
      let key: string;
      if (path[i] === '"') key = quoted();
      else key = bare('=]');
      if (path[i] === ']') {
        if (!/^\d+$/.test(key)) throw new PathSyntaxError(path, open, `[${key}] is neither an index (a number from 0) nor a filter (key=value)`);
        steps.push({ kind: 'index', index: Number(key) });
        i++;
        continue;
      }
      if (path[i] !== '=') throw new PathSyntaxError(path, open, 'a "[" is not closed');
      i++;
      const value = path[i] === '"' ? quoted() : bare(']');
      if (path[i] !== ']') throw new PathSyntaxError(path, open, 'a "[" is not closed');
      i++;
      steps.push({ kind: 'filter', key, value });
    } else {
      throw new PathSyntaxError(path, i, `unexpected ${JSON.stringify(c)} (quote names that contain . [ ] or ")`);
    }
  }
  return steps;
}

/** Writes steps back as a path (the canonical form: names quoted only when they must be). */
export function formatPath(steps: PathStep[]): string {
  const q = (k: string) => `"${k.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  let out = '';
  for (let s = 0; s < steps.length; s++) {
    const step = steps[s]!;
    if (step.kind === 'key') out += (s === 0 ? '' : '.') + (step.key === '' || /[.[\]"]/.test(step.key) ? q(step.key) : step.key);
    else if (step.kind === 'index') out += `[${step.index}]`;
    else {
      const key = step.key === '' || /[=\]]/.test(step.key) || step.key.startsWith('"') ? q(step.key) : step.key;
      const value = step.value.includes(']') || step.value.startsWith('"') ? q(step.value) : step.value;
      out += `[${key}=${value}]`;
    }
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
        if (step.kind === 'index') cur = cur[step.index];
        else {
          const { key, value } = step;
          cur = cur.find((el) => el !== null && typeof el === 'object' && !Array.isArray(el) && scalarText((el as Record<string, unknown>)[key]) === value);
        }
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
