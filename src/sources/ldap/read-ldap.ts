/**
 * The LDAP / Active Directory connector (ldapts): ldaps:// or StartTLS with the CA verified, a simple bind,
 * and paged searches consumed page by page (paged-search.ts: one page ahead, answers without the paged-results
 * control refused). Departments come from the OU tree or from a member attribute; a member's department
 * from its DN or an attribute. Any failed search fails the whole source. When the run keeps a snapshot of the
 * source (issue 31), the members are read by delta or kept in it (delta-members.ts); departments and positions are
 * read in full every run.
 */
import type { Client, SearchEntry } from 'ldapts';
import type { FieldSpec, LdapSourceConfig } from '../../config/sources.js';
import { compileField, SourceCollector, type SourceBatch } from '../../desired/index.js';
import { sourceUnreadable, throwIfAborted, type ReadObserver, type SourceReadContext } from '../context.js';
import { failureOf, openLdap } from './connect.js';
import { isConnectFailure, isTlsFailure, searchAccessFailure, serverWords, type LdapFailureContext } from './errors.js';
import { readMembersWithSnapshot, type MemberQuery, type Search } from './delta-members.js';
import { dnKey, dnParts } from './dn.js';
import { leanEntries } from './entry-decoder.js';
import { entryLookup, EntryReader, pagedSearch, PagingIgnoredError } from './paged-search.js';
import { LDAP_PROFILES } from './profiles.js';
import { keyAttribute } from './snapshot-entry.js';
import { takeWatermark } from './watermark.js';

/** The resolved plan of what to search and how to map it. */
function plan(source: LdapSourceConfig) {
  const profile = LDAP_PROFILES[source.profile];
  const ouTree = source.departments === undefined ? profile.departmentsFromOuTree : source.departments !== false;
  const deptCfg = source.departments || undefined;
  const departmentFrom = source.members.department_from ?? (ouTree ? 'dn' : 'attribute');
  const memberFields: Record<string, FieldSpec> = { ...profile.memberFields };
  for (const [k, v] of Object.entries(source.members.fields)) if (v !== undefined) memberFields[k] = v;
  if (departmentFrom === 'dn') {
    delete memberFields.department;
    delete memberFields.department_path;
  } else if (!memberFields.department && !memberFields.department_path) {
    memberFields.department_path = profile.departmentAttribute;
  }
  const departmentFields = { ...profile.departmentFields, ...Object.fromEntries(Object.entries(deptCfg?.fields ?? {}).filter(([, v]) => v !== undefined)) } as {
    id: FieldSpec;
    name: FieldSpec;
    parent?: FieldSpec;
    sort_order?: FieldSpec;
  };
  return { profile, ouTree, deptCfg, departmentFrom, memberFields, departmentFields };
}

/** Reads a `type: ldap` source. */
export async function readLdapSource(source: LdapSourceConfig, ctx: SourceReadContext): Promise<SourceBatch> {
  const p = plan(source);
  const collector = new SourceCollector({
    source: source.name,
    phoneRegion: source.phone_region,
    phoneCache: ctx.phoneCache,
    phonePolicy: source.phone_policy,
    authoritativeFields: source.authoritative_fields,
    timezone: ctx.timezone,
    departments: p.ouTree ? { fields: p.departmentFields, include: p.deptCfg?.include, exclude: p.deptCfg?.exclude } : undefined,
    positions: source.positions,
    members: { fields: p.memberFields, status_map: source.members.status_map, path_separator: source.members.path_separator, include: source.members.include, exclude: source.members.exclude },
    trace: ctx.observe?.trace,
    stage: ctx.stage,
    rank: ctx.rank,
    coverage: ctx.fieldCoverage ? { paths: false } : undefined,
  });
  const observe = ctx.observe;
  const { client, failure } = await openLdap(source, ctx);
  leanEntries(client);
  try {
    const search = searcher(client, failure, ctx);
    // A preview reads the first entries only: never by delta, never into the snapshot.
    const delta = observe === undefined ? ctx.delta : undefined;
    // Taken before anything is read: an entry changed while this read runs is read again by the next delta.
    const mark = delta ? await takeWatermark(client, source.members.base_dn ?? source.base_dn, ctx.clock) : undefined;
    // Departments (OU tree): read whole even for a preview of members, whose departments come from their DN.
    const deptByDn = p.ouTree ? await readOuTree(source, p, collector, search, observe) : new Map<string, string>();
    if (source.positions && observe?.wants('positions') !== false) {
      const cfg = source.positions;
      await search('positions', cfg.base_dn ?? source.base_dn, cfg.filter, cfg.scope, collector.fieldNames('positions'), (e) => {
        const last = observe?.record('positions', rawEntry(e), e.name) === true;
        collector.addPosition(entryLookup(e), e.name);
        return last;
      });
    }
    if (observe?.wants('members') !== false) {
      const query = memberQuery(source, p, collector, delta !== undefined);
      const map = memberMapper(p, collector, deptByDn, observe);
      if (delta) await readMembersWithSnapshot(query, mark!, search, delta, map, { source: source.name, deltaEnabled: source.delta, logger: ctx.logger });
      else await search('members', query.base, query.filter, query.scope, query.attributes, map);
    }
  } finally {
    await client.unbind().catch(() => {});
  }
  return collector.finish();
}

/** One paged search after another on the source's connection; a failure names the search and what to change. */
export function searcher(client: Client, failure: LdapFailureContext, ctx: SourceReadContext): Search {
  const source = failure.source;
  return async (entity, base, filter, scope, attributes, onEntry) => {
    try {
      for await (const page of pagedSearch(client, { base, scope, filter, attributes, pageSize: source.page_size, timeLimitSeconds: source.time_limit_seconds })) {
        throwIfAborted(ctx.signal);
        for (const e of page) if (onEntry(e) === true) return;
      }
    } catch (err) {
      if ((err as { code?: string }).code === 'SOURCE_UNREADABLE') throw err;
      throwIfAborted(ctx.signal);
      if (err instanceof PagingIgnoredError) {
        // The server may have stopped early (or ignored paging), so the read cannot be trusted to be complete.
        throw sourceUnreadable(
          source.name,
          `${entity}: search under "${base}": the server answered a paged search without the paged-results control (RFC 2696), so the read may be short; nothing is written (check the server's paged-results limits for ${source.bind_dn ?? 'anonymous binds'})`,
        );
      }
      // Without a bind the first search opens the connection (and makes the TLS handshake of ldaps://).
      if (isConnectFailure(err) || isTlsFailure(err)) throw failureOf(err, failure, 'search', 'search of the members filter');
      const access = searchAccessFailure(err, failure, base, entity);
      throw sourceUnreadable(source.name, `${entity}: search under "${base}" with ${filter} failed: ${access ?? serverWords(err)}`, err);
    }
  };
}

/** The departments of the OU tree: few, so held until every parent is known. Returns department ids by DN key. */
async function readOuTree(source: LdapSourceConfig, p: ReturnType<typeof plan>, collector: SourceCollector, search: Search, observe: ReadObserver | undefined): Promise<Map<string, string>> {
  const deptByDn = new Map<string, string>();
  const cfg = p.deptCfg;
  const base = cfg?.base_dn ?? source.base_dn;
  const entries: SearchEntry[] = [];
  const attrs = uniq([...collector.fieldNames('departments')]);
  await search('departments', base, cfg?.filter ?? p.profile.departmentFilter, cfg?.scope ?? 'sub', attrs, (e) => {
    entries.push(e);
  });
  const idReader = compileField(p.departmentFields.id);
  for (const e of entries) {
    const id = idReader.read(entryLookup(e));
    if (id.ok && id.value.trim() !== '') deptByDn.set(dnKey(e.name), id.value.trim());
  }
  const observed = observe?.wants('departments') === true;
  for (const e of entries) {
    const overrides: { parent_source_id?: string } = {};
    if (!p.departmentFields.parent) {
      const parent = nearest(deptByDn, dnParts(e.name).slice(1));
      overrides.parent_source_id = parent ?? '';
    }
    const last = observed && observe!.record('departments', rawEntry(e), e.name);
    collector.addDepartment(entryLookup(e), e.name, overrides);
    if (last) break;
  }
  return deptByDn;
}

/** The members' search as configured, asking for what the mapping reads (and the snapshot's key attribute `withKey`). */
function memberQuery(source: LdapSourceConfig, p: ReturnType<typeof plan>, collector: SourceCollector, withKey: boolean): MemberQuery {
  const m = source.members;
  const key = keyAttribute(source.profile);
  const attributes = uniq([...collector.fieldNames('members'), ...p.profile.disabledAttributes, ...p.profile.endDateAttributes, ...(withKey ? [key] : [])]);
  return { base: m.base_dn ?? source.base_dn, filter: m.filter ?? p.profile.memberFilter, scope: m.scope, attributes, keyAttribute: key };
}

/** Maps each member entry as it arrives, its department from its DN or an attribute; true: a preview has enough. */
function memberMapper(p: ReturnType<typeof plan>, collector: SourceCollector, deptByDn: Map<string, string>, observe: ReadObserver | undefined): (e: SearchEntry) => boolean {
  // Members share parents: resolve each distinct parent DN once.
  const byParent = new Map<string, string>();
  const departmentOf = (dn: string): string => {
    const comma = firstUnescapedComma(dn);
    const parent = comma < 0 ? '' : dn.slice(comma + 1);
    let id = byParent.get(parent);
    if (id === undefined) {
      id = nearest(deptByDn, dnParts(parent)) ?? '';
      byParent.set(parent, id);
    }
    return id;
  };
  const reader = new EntryReader();
  return (e) => {
    reader.entry = e;
    const lookup = reader.lookup;
    const overrides: { department_source_id?: string; disabled: boolean; end_date?: { text: string; ms: number } } = { disabled: p.profile.isDisabled(lookup) };
    const end = p.profile.endDate(lookup);
    if (end) overrides.end_date = end;
    if (p.departmentFrom === 'dn') overrides.department_source_id = departmentOf(e.name);
    const last = observe !== undefined && observe.record('members', rawEntry(e), e.name);
    collector.addMember(lookup, e.name, overrides);
    return last;
  };
}

/** One entry as a preview shows it: its DN and each attribute as the mapping reads it (binary values in base64). */
function rawEntry(e: SearchEntry): Record<string, unknown> {
  const lookup = entryLookup(e);
  const raw: Record<string, unknown> = { dn: e.name };
  const shown = (v: unknown): unknown => (Buffer.isBuffer(v) ? `base64:${v.toString('base64')}` : Array.isArray(v) ? v.map(shown) : v);
  for (const a of e.attributes) raw[a.type] = shown(lookup(a.type));
  return raw;
}

function firstUnescapedComma(dn: string): number {
  for (let i = 0; i < dn.length; i++) {
    const c = dn.charCodeAt(i);
    if (c === 92) i++; // backslash escapes the next character
    else if (c === 44 || c === 59) return i; // , or ;
  }
  return -1;
}

/** The id of the nearest department at or above the DN given by its RDNs. */
function nearest(deptByDn: Map<string, string>, rdns: string[]): string | undefined {
  for (let i = 0; i < rdns.length; i++) {
    const id = deptByDn.get(rdns.slice(i).join(','));
    if (id !== undefined) return id;
  }
  return undefined;
}

function uniq(names: string[]): string[] {
  return [...new Set(names.filter((n) => n.toLowerCase() !== 'dn'))];
}
