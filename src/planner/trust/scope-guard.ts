/**
 * Config scope guard (issue 10): the parts of the config that decide WHICH records the sources yield (sources, their
 * files/URLs, base DNs, filters, search scopes, the sync root) are fingerprinted. When they changed since the last
 * accepted run and the plan removes records, the run stops (exit 3) unless `--accept-scope-change`: a new filter or a
 * dropped source reads exactly like "these people left".
 */
import { createHash } from 'node:crypto';
import type { Config } from '../../config/schema.js';
import type { SourceConfig } from '../../config/sources.js';
import type { PlanRefusal } from '../../domain/index.js';
import { redactUrl } from '../../shared/redact.js';

/** Scope parts, `<source>/<entity>` (or `<source>`, `sync.root_department`) -> a JSON description. */
export type ConfigScope = Record<string, string>;

const ENTITIES = ['departments', 'positions', 'members'] as const;

/**
 * A source URL as the scope keeps it (the scope is stored in the state DB and printed in refusals): through the
 * shared redactor, with a short hash of the full URL when that hid something, so that a change of a query value
 * or of the userinfo still changes the scope.
 */
function scopeUrl(url: string): { url: string; url_hash?: string } {
  const shown = redactUrl(url);
  return shown === url ? { url } : { url: shown, url_hash: createHash('sha256').update(url).digest('hex').slice(0, 16) };
}

function sourceScope(s: SourceConfig, out: ConfigScope): void {
  out[s.name] = JSON.stringify(s.type === 'ldap' ? { type: s.type, ...scopeUrl(s.url), base_dn: s.base_dn, profile: s.profile } : { type: s.type });
  for (const e of ENTITIES) {
    if (s.type === 'ldap') {
      const block = s[e];
      if (block === undefined || block === false) continue;
      out[`${s.name}/${e}`] = JSON.stringify({ base_dn: block.base_dn ?? s.base_dn, filter: block.filter ?? '(profile default)', scope: block.scope });
    } else if (s.type === 'csv') {
      const block = s[e];
      if (block) out[`${s.name}/${e}`] = JSON.stringify({ file: block.file });
    } else {
      const block = s[e];
      if (block) out[`${s.name}/${e}`] = JSON.stringify({ ...(block.url ? scopeUrl(block.url) : { file: block.file }), items_path: block.items_path });
    }
  }
}

/** The scope of a config. */
export function configScope(config: Pick<Config, 'sources' | 'sync'>): ConfigScope {
  const out: ConfigScope = {};
  for (const s of config.sources) sourceScope(s, out);
  out['sync.root_department'] = JSON.stringify(config.sync.root_department ?? '');
  return out;
}

/** A stable fingerprint of a scope. */
export function scopeFingerprint(scope: ConfigScope): string {
  const keys = Object.keys(scope).sort();
  return createHash('sha256')
    .update(JSON.stringify(keys.map((k) => [k, scope[k]])))
    .digest('hex');
}

/** Human lines naming what changed between two scopes. */
export function describeScopeChange(before: ConfigScope, after: ConfigScope): string[] {
  const lines: string[] = [];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  for (const k of keys) {
    const a = before[k];
    const b = after[k];
    if (a === b) continue;
    // A source added or removed as a whole is named once, not per entity.
    const sourceName = k.includes('/') ? k.slice(0, k.indexOf('/')) : undefined;
    if (sourceName !== undefined && (before[sourceName] === undefined) !== (after[sourceName] === undefined)) continue;
    if (b === undefined) lines.push(sourceName !== undefined ? `${k} no longer read` : `source ${k} removed`);
    else if (a === undefined) lines.push(sourceName !== undefined ? `${k} now read` : `source ${k} added`);
    else lines.push(`${k} changed from ${a} to ${b}`);
  }
  return lines;
}

/** The refusal when the scope changed and the plan removes `removals` records. */
export function scopeChangeRefusal(changes: readonly string[], removals: number): PlanRefusal {
  return {
    guard: 'scope_change',
    message: `the config's scope changed since the last accepted run (${changes.join('; ')}) and the plan would remove ${removals} record(s); nothing applied (re-run with --accept-scope-change if the change is intended)`,
  };
}
