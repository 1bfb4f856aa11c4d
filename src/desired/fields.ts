/**
 * Field specs from the config compiled into readers: an attribute or dotted path, a template ("{givenName} {sn}"),
 * or a list of those where the first non-empty value wins. Pure: a reader only sees a lookup function.
 */
import type { FieldSpec } from '../config/sources.js';

/** Looks a name (column, attribute, dotted path) up in one raw record; undefined when absent. */
export type Lookup = (name: string) => unknown;

/** A raw value turned into text, or a problem with it. */
export type TextResult = { ok: true; value: string } | { ok: false; problem: string };

/** A compiled field: reads text from a record. */
export interface FieldReader {
  /** The names this field reads (for LDAP attribute lists and CSV header checks). */
  names: string[];
  read(lookup: Lookup): TextResult;
}

const PLACEHOLDER = /\{([^{}]+)\}/g;

/** Turns one raw value into text: arrays give their first element (multi-valued LDAP), objects are a problem. */
export function toText(raw: unknown, name: string): TextResult {
  if (raw === undefined || raw === null) return { ok: true, value: '' };
  if (typeof raw === 'string') return { ok: true, value: raw };
  if (typeof raw === 'number' || typeof raw === 'boolean' || typeof raw === 'bigint') return { ok: true, value: String(raw) };
  if (Array.isArray(raw)) return raw.length === 0 ? { ok: true, value: '' } : toText(raw[0], name);
  if (Buffer.isBuffer(raw)) return { ok: true, value: raw.toString('utf8') };
  return { ok: false, problem: `${name} is an object, not a value` };
}

function compileOne(spec: string): FieldReader {
  if (!spec.includes('{')) {
    return { names: [spec], read: (lookup) => toText(lookup(spec), spec) };
  }
  const names: string[] = [];
  const parts: (string | { name: string })[] = [];
  let last = 0;
  for (const m of spec.matchAll(PLACEHOLDER)) {
    if (m.index > last) parts.push(spec.slice(last, m.index));
    const name = m[1]!.trim();
    names.push(name);
    parts.push({ name });
    last = m.index + m[0].length;
  }
  if (last < spec.length) parts.push(spec.slice(last));
  return {
    names,
    read(lookup) {
      let out = '';
      let any = false;
      for (const p of parts) {
        if (typeof p === 'string') {
          out += p;
          continue;
        }
        const t = toText(lookup(p.name), p.name);
        if (!t.ok) return t;
        const v = t.value.trim();
        if (v !== '') any = true;
        out += v;
      }
      // A template whose placeholders are all empty is empty (not just its literal text, e.g. " " or "@example.com").
      // Empty placeholders leave doubled spaces: collapse them.
      return { ok: true, value: any ? out.replace(/ {2,}/g, ' ').trim() : '' };
    },
  };
}

/** Compiles a field spec from the config. */
export function compileField(spec: FieldSpec): FieldReader {
  const list = (Array.isArray(spec) ? spec : [spec]).map(compileOne);
  if (list.length === 1) return list[0]!;
  return {
    names: list.flatMap((r) => r.names),
    read(lookup) {
      for (const r of list) {
        const t = r.read(lookup);
        if (!t.ok) return t;
        if (t.value.trim() !== '') return t;
      }
      return { ok: true, value: '' };
    },
  };
}

/** Reads a dotted path (`department.id`, `items.0.name`) from parsed JSON. */
export function getPath(obj: unknown, path: string): unknown {
  if (path === '') return obj;
  let cur: unknown = obj;
  for (const key of path.split('.')) {
    if (cur === null || cur === undefined || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}
