/**
 * The members of an LDAP source read by delta (issue 31): two searches instead of the whole directory.
 *
 * 1. An id-only listing: the member search as configured, asking for the key attribute alone (entryUUID or
 *    objectGUID; the DN comes with every entry). It says which members exist now, in the server's order, and where.
 * 2. The changed entries: the member filter ANDed with `modifyTimestamp>=` / `uSNChanged>=` the saved watermark, with
 *    every attribute the mapping reads.
 * Each listed member is then mapped, in the listing's order, from its changed entry or else from its snapshot entry
 * (under the DN listed now: a parent renamed since moves an entry without changing it); snapshot members not listed
 * are gone (deleted, moved out of the base, no longer matching the filter). So the source's batch is the one a full
 * read would give. A listed member that is neither changed nor in the snapshot (moved into the base with its parent)
 * cannot be mapped from what was read: the caller reads in full.
 */
import type { SearchEntry } from 'ldapts';
import type { DeltaReadContext } from '../delta/types.js';
import { entryKey, isStoredEntry, loadEntry, storeEntry, type StoredEntry } from './snapshot-entry.js';
import type { Logger } from '../../shared/logger.js';
import { changedSince, checkWatermark, formatWatermark, type LdapWatermark } from './watermark.js';

/** One search of the source (read-ldap.ts); `onEntry` returning true ends it. */
export type Search = (entity: string, base: string, filter: string, scope: 'sub' | 'one', attributes: string[], onEntry: (e: SearchEntry) => boolean | void) => Promise<void>;

/** The member search as configured. */
export interface MemberQuery {
  base: string;
  filter: string;
  scope: 'sub' | 'one';
  /** What the mapping reads, and the key attribute. */
  attributes: string[];
  keyAttribute: string;
}

/** What a delta read of the members did (logged; the counts are what the server sent). */
export interface DeltaMembersCounts {
  /** Entries of the id-only listing. */
  listed: number;
  /** Entries the changed-entries search returned. */
  changed: number;
  /** Snapshot members no longer listed. */
  removed: number;
  /** Unchanged members listed under another DN than the snapshot's. */
  moved: number;
}

/** A delta read that cannot be completed: why, for `fellBackToFull`. */
export interface DeltaFallback {
  fallback: string;
}

/** Reads the members by delta, mapping each with `map`; or says why a full read must be done instead (nothing mapped then). */
export async function readMembersByDelta(query: MemberQuery, mark: LdapWatermark, search: Search, delta: DeltaReadContext, map: (e: SearchEntry) => void): Promise<DeltaMembersCounts | DeltaFallback> {
  const snapshot = new Map<string, StoredEntry>();
  for (const record of delta.snapshot('members')) {
    if (!isStoredEntry(record.raw)) return { fallback: `the snapshot record ${record.key} is not an LDAP entry` };
    snapshot.set(record.key, record.raw);
  }
  const listedKeys: string[] = [];
  const listedDns: string[] = [];
  await search('members', query.base, query.filter, query.scope, [query.keyAttribute], (e) => {
    listedKeys.push(entryKey(e, query.keyAttribute));
    listedDns.push(e.name);
  });
  const changed = new Map<string, SearchEntry>();
  let changedCount = 0;
  try {
    await search('members', query.base, changedSince(query.filter, mark), query.scope, query.attributes, (e) => {
      changedCount++;
      changed.set(entryKey(e, query.keyAttribute), e);
    });
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'SOURCE_UNREADABLE') throw err;
    return { fallback: `the server refused the search for entries changed since the watermark: ${(err as Error).message}` };
  }
  const why = unexplained(listedKeys, changed, snapshot);
  if (why !== undefined) return { fallback: why };
  const counts: DeltaMembersCounts = { listed: listedKeys.length, changed: changedCount, removed: 0, moved: 0 };
  for (let i = 0; i < listedKeys.length; i++) {
    const key = listedKeys[i]!;
    const dn = listedDns[i]!;
    const fresh = changed.get(key);
    const stored = snapshot.get(key);
    snapshot.delete(key);
    if (fresh) {
      delta.writer.put('members', { key, raw: storeEntry(fresh) });
      map(fresh);
      continue;
    }
    if (stored!.dn !== dn) {
      counts.moved++;
      delta.writer.put('members', { key, raw: { dn, attrs: stored!.attrs } satisfies StoredEntry });
    }
    map(loadEntry(stored!, dn));
  }
  for (const key of snapshot.keys()) {
    delta.writer.remove('members', key);
    counts.removed++;
  }
  return counts;
}

/** Listed members the two searches cannot map: new without a change of their own, or sharing a key with another. */
function unexplained(listedKeys: string[], changed: Map<string, SearchEntry>, snapshot: Map<string, StoredEntry>): string | undefined {
  const seen = new Set<string>();
  let unknown = 0;
  let shared = 0;
  for (const key of listedKeys) {
    if (seen.has(key)) shared++;
    seen.add(key);
    if (!changed.has(key) && !snapshot.has(key)) unknown++;
  }
  if (shared > 0) return `${shared} member entries share a key attribute value with another entry`;
  if (unknown > 0) return `${unknown} member entries are new without a change of their own (moved into the base with a parent, or keyed by a DN that changed)`;
  return undefined;
}

/** What readMembersWithSnapshot needs besides the searches. */
export interface SnapshotReadOptions {
  source: string;
  /** The source's `delta:` setting: false reads in full every run (the snapshot is still kept). */
  deltaEnabled: boolean;
  logger: Logger;
}

/**
 * The members of a run that keeps a snapshot: by delta when the run asks for it and the saved watermark serves,
 * else in full with every entry put in the snapshot. `mark` is the watermark taken before this read began; it is
 * given to the writer once the read has ended (after a fallback, once the full read has ended).
 */
export async function readMembersWithSnapshot(query: MemberQuery, mark: LdapWatermark, search: Search, delta: DeltaReadContext, map: (e: SearchEntry) => void, opts: SnapshotReadOptions): Promise<void> {
  let reason = delta.reason;
  if (delta.mode === 'delta') {
    const checked = opts.deltaEnabled ? checkWatermark(delta.watermark, mark) : { reason: 'delta: false in the source config' };
    if ('mark' in checked) {
      const result = await readMembersByDelta(query, checked.mark, search, delta, map);
      if (!('fallback' in result)) {
        delta.writer.watermark(formatWatermark(mark));
        opts.logger.info({ source: opts.source, mode: 'delta', ...result }, 'LDAP members read by delta');
        return;
      }
      reason = result.fallback;
    } else reason = checked.reason;
    delta.writer.fellBackToFull(reason);
  }
  const listed = await readAllWithSnapshot(query, search, delta, map);
  opts.logger.info({ source: opts.source, mode: 'full', reason, listed }, 'LDAP members read in full');
  // A bind that may not search the watermark's attribute finds no changed entry, ever: such a watermark says so
  // instead, and the next delta read falls back to a full read with that reason.
  const unsearchable = listed > 0 && opts.deltaEnabled ? await unsearchableWatermark(query, mark, search) : undefined;
  if (unsearchable) opts.logger.warn({ source: opts.source, attribute: mark.by }, 'LDAP delta reads unusable: the bind cannot search the watermark attribute');
  delta.writer.watermark(unsearchable ?? formatWatermark(mark));
}

/** Every member, each put in the snapshot; returns how many distinct keys were read. */
async function readAllWithSnapshot(query: MemberQuery, search: Search, delta: DeltaReadContext, map: (e: SearchEntry) => void): Promise<number> {
  const put = new Set<string>();
  await search('members', query.base, query.filter, query.scope, query.attributes, (e) => {
    const key = entryKey(e, query.keyAttribute);
    // A key shared by two entries (a copied objectGUID) is kept once; a delta read of such a directory reads in full.
    if (!put.has(key)) delta.writer.put('members', { key, raw: storeEntry(e) });
    put.add(key);
    map(e);
  });
  return put.size;
}

/**
 * Whether the members can be found by the watermark's attribute at all: a search for members with it at or after
 * the lowest value, stopped at the first entry. None while members exist: the bind may not search the attribute
 * (an ACL), and the saved watermark is one that says why (undefined: it can).
 */
async function unsearchableWatermark(query: MemberQuery, mark: LdapWatermark, search: Search): Promise<string | undefined> {
  const lowest: LdapWatermark = mark.by === 'uSNChanged' ? { ...mark, usn: '0' } : { by: 'modifyTimestamp', at: '19700101000000Z' };
  let found = false;
  await search('members', query.base, changedSince(query.filter, lowest), query.scope, [query.keyAttribute], () => {
    found = true;
    return true;
  });
  return found ? undefined : formatWatermark({ by: 'none', reason: `no member entry matched ${mark.by}>=${mark.by === 'uSNChanged' ? '0' : '19700101000000Z'}: the bind DN may not search ${mark.by} (grant it search access to ${mark.by}, or set delta: false)` });
}
