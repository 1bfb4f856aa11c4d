/**
 * Scoping (`include:` / `exclude:` of a source entity): which raw records a sync takes at all, decided before
 * mapping and validation, so one export can feed several syncs and contractors can stay out. A record is taken when
 * it matches some include rule (or there are none) and no exclude rule. A rule tests one raw name (a column, an
 * attribute, a field path) against a list of values or a regular expression that must match the whole value; a
 * multi-valued attribute matches when any of its values does. Pure.
 */
import { textOf, type Lookup } from './fields.js';

/** One rule as configured. */
export interface ScopeRuleConfig {
  field: string;
  values?: string[] | undefined;
  pattern?: string | undefined;
}

/** The scope of one entity as configured. */
export interface ScopeConfig {
  include?: ScopeRuleConfig[] | undefined;
  exclude?: ScopeRuleConfig[] | undefined;
}

/** A compiled scope: `takes(lookup)` says whether a record is in scope. */
export interface Scope {
  /** The raw names the rules read, with the config key of each (`exclude[0].field`), for header checks and attribute lists. */
  names: [string, string][];
  takes(lookup: Lookup): boolean;
}

type Test = (lookup: Lookup) => boolean;

function compileRule(rule: ScopeRuleConfig): Test {
  const matchOne: (v: string) => boolean =
    rule.values !== undefined
      ? ((set) => (v: string) => set.has(v))(new Set(rule.values))
      : ((re) => (v: string) => re.test(v))(new RegExp(`^(?:${rule.pattern ?? ''})$`, 'u'));
  return (lookup) => {
    const raw = lookup(rule.field);
    const list = Array.isArray(raw) ? raw : [raw];
    for (const item of list) {
      const t = textOf(item, rule.field);
      if (typeof t === 'string' && matchOne(t.trim())) return true;
    }
    return false;
  };
}

/** Compiles a scope; undefined when it has no rules (everything is in scope). */
export function compileScope(cfg: ScopeConfig | undefined): Scope | undefined {
  const include = (cfg?.include ?? []).map(compileRule);
  const exclude = (cfg?.exclude ?? []).map(compileRule);
  if (include.length === 0 && exclude.length === 0) return undefined;
  const names: [string, string][] = [
    ...(cfg?.include ?? []).map((r, i): [string, string] => [`include[${i}].field`, r.field]),
    ...(cfg?.exclude ?? []).map((r, i): [string, string] => [`exclude[${i}].field`, r.field]),
  ];
  return {
    names,
    takes: (lookup) => (include.length === 0 || include.some((t) => t(lookup))) && !exclude.some((t) => t(lookup)),
  };
}
