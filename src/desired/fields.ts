/**
 * Field specs from the config compiled into readers: an attribute or dotted path, a template ("{givenName} {sn}"),
 * or a list of those where the first non-empty value wins. Pure: a reader only sees a lookup function.
 */
import type { FieldSpec } from '../config/sources.js';
import { cachedPath, WrongType } from '../shared/field-path.js';
import { PLACEHOLDER, placeholderOf } from '../shared/field-spec.js';
import { checkText, MAX_NAME_LENGTH, normaliseEmail, type Problem } from './normalise.js';

/** Looks a name (column, attribute, dotted path) up in one raw record; undefined when absent. */
export type Lookup = (name: string) => unknown;

/** A raw value that cannot be turned into text; `reason` is the quarantine reason (default invalid_value). */
export type TextProblem = { ok: false; problem: string; reason?: string };

/** A raw value turned into text, or a problem with it. */
export type TextResult = { ok: true; value: string } | TextProblem;

/** A compiled field: reads text from a record. */
export interface FieldReader {
  /** The names this field reads (for LDAP attribute lists and CSV header checks). */
  names: string[];
  read(lookup: Lookup): TextResult;
  /** The same as `read` without a result object per value (the mapping's hot path): the text, or the problem. */
  text(lookup: Lookup): string | TextProblem;
}


/** Turns one raw value into text, or a problem (objects): arrays give their first element (multi-valued LDAP). */
export function textOf(raw: unknown, name: string): string | TextProblem {
  if (typeof raw === 'string') return raw;
  if (raw === undefined || raw === null) return '';
  if (typeof raw === 'number' || typeof raw === 'boolean' || typeof raw === 'bigint') return String(raw);
  if (Array.isArray(raw)) return raw.length === 0 ? '' : textOf(raw[0], name);
  if (Buffer.isBuffer(raw)) return raw.toString('utf8');
  if (raw instanceof WrongType) return { ok: false, problem: raw.message, reason: 'wrong_type' };
  return { ok: false, problem: `${name} is an object, not a value` };
}

/** Turns one raw value into text: arrays give their first element (multi-valued LDAP), objects are a problem. */
export function toText(raw: unknown, name: string): TextResult {
  return asResult(textOf(raw, name));
}

const asResult = (t: string | TextProblem): TextResult => (typeof t === 'string' ? { ok: true, value: t } : t);

function compileOne(spec: string): FieldReader {
  if (!spec.includes('{')) {
    const text = (lookup: Lookup) => textOf(lookup(spec), spec);
    return { names: [spec], text, read: (lookup) => asResult(text(lookup)) };
  }
  const names: string[] = [];
  const parts: (string | { name: string; required: boolean })[] = [];
  let last = 0;
  for (const m of spec.matchAll(PLACEHOLDER)) {
    if (m.index > last) parts.push(spec.slice(last, m.index));
    const p = placeholderOf(m[1]!);
    names.push(p.name);
    parts.push(p);
    last = m.index + m[0].length;
  }
  if (last < spec.length) parts.push(spec.slice(last));
  // Compiled once per field: the per-record work is a walk over the parts.
  // The pieces are joined, not added up: `a + ' ' + b` is a tree of three strings a record keeps (about 80 bytes for
  // a name), join's result one flat string (about 40); a million names differ by tens of megabytes (issue 31).
  const pieces: string[] = new Array<string>(parts.length);
  const text = (lookup: Lookup): string | TextProblem => {
    let any = false;
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (typeof p === 'string') {
        pieces[i] = p;
        continue;
      }
      const t = textOf(lookup(p.name), p.name);
      if (typeof t !== 'string') return t;
      const v = t.trim();
      // `{!preferred_first_name} {last_name}`: without the required part the template is empty, so a list of
      // alternatives moves on to the next one (issue 45).
      if (v === '' && p.required) return '';
      if (v !== '') any = true;
      pieces[i] = v;
    }
    // A template whose placeholders are all empty is empty (not just its literal text, e.g. " " or "@example.com").
    // Empty placeholders leave doubled spaces: collapse them.
    if (!any) return '';
    const out = pieces.join('');
    return (out.includes('  ') ? out.replace(DOUBLED_SPACES, ' ') : out).trim();
  };
  return { names, text, read: (lookup) => asResult(text(lookup)) };
}

const DOUBLED_SPACES = / {2,}/g;

/** Compiles a field spec from the config. */
export function compileField(spec: FieldSpec): FieldReader {
  const list = (Array.isArray(spec) ? spec : [spec]).map(compileOne);
  if (list.length === 1) return list[0]!;
  const text = (lookup: Lookup): string | TextProblem => {
    for (let i = 0; i < list.length; i++) {
      const t = list[i]!.text(lookup);
      if (typeof t !== 'string' || t.trim() !== '') return t;
    }
    return '';
  };
  return { names: list.flatMap((r) => r.names), text, read: (lookup) => asResult(text(lookup)) };
}

/** Reads a field path (see path.ts: `department.id`, `emails[primary=true].value`) from parsed JSON; a WrongType when a step cannot be walked. */
export function getPath(obj: unknown, path: string): unknown {
  return cachedPath(path).get(obj);
}

/**
 * A lookup into one JSON record for text fields: a value must be a string, number or boolean (or absent / null);
 * an array or object at the end of a path is a WrongType, never its first element or nothing.
 */
export function jsonLookup(record: unknown): Lookup {
  return (name) => {
    const v = cachedPath(name).get(record);
    if (v !== null && typeof v === 'object' && !(v instanceof WrongType)) return new WrongType(name, Array.isArray(v) ? 'an array' : 'an object', 'a string, number or boolean');
    return v;
  };
}

/** One reader per alternative of a field spec (a single spec is one alternative). */
export function alternativesOf(spec: FieldSpec | undefined): FieldReader[] {
  return spec === undefined ? [] : (Array.isArray(spec) ? spec : [spec]).map((f) => compileField(f));
}

/**
 * A member's e-mail from the alternatives of its `email` field. The first alternative that gives a value is the
 * e-mail, and an invalid one is the record's problem (invalid_email); an alternative after the first is a fallback
 * (SCIM's `userName`, Graph's `userPrincipalName`), taken only when its value is an address and passed over when it
 * is not. Undefined: no alternative gave an address.
 */
export function readEmail(alternatives: FieldReader[], lookup: Lookup): { value: string } | Problem | undefined {
  for (let i = 0; i < alternatives.length; i++) {
    const t = alternatives[i]!.text(lookup);
    if (typeof t !== 'string') return { reason: t.reason ?? 'invalid_value', message: `email: ${t.problem}` };
    const raw = t.trim();
    if (raw === '') continue;
    const fallback = i > 0;
    const bad = checkText('email', raw, MAX_NAME_LENGTH);
    if (bad) {
      if (fallback) continue;
      return bad;
    }
    const r = normaliseEmail(raw);
    if ('reason' in r && fallback) continue;
    return r;
  }
  return undefined;
}

/**
 * The message of `missing_status`: a source whose status field is required (`members.require_status`) sent a
 * record without it. `hint` is the preset's word on what to grant so the source sends the field.
 */
export function missingStatus(names: string[], hint: true | string): string {
  const what = typeof hint === 'string' ? hint : 'map status to a field the source always sends, or set members.require_status: false';
  return `status: the record has no ${names.join(' / ')}; a record without a status is never taken as active: ${what}`;
}
