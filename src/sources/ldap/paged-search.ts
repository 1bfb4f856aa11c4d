/**
 * One paged search (RFC 2696) on an ldapts client, page by page, and a reader of the entries it yields.
 *
 * The pages are asked for here, through the client's one request method, rather than by ldapts' `searchPaginated`:
 * - the answer's paged-results control is seen, so an answer without it (a server that ignored paging or stopped
 *   early) fails the read instead of ending it as if it were complete;
 * - the next page is asked for as soon as a page has arrived (its cookie is known then), so the server prepares it
 *   while this one is mapped: one page ahead, still one search at a time on the connection;
 * - entries are read as ldapts parsed them (DN and attribute list), without `toObject`'s copy of every entry.
 * A page without entries but with a cookie is followed (Active Directory may send one); ldapts stops there.
 */
import { FilterParser, MessageResponseStatus, PagedResultsControl, SearchRequest, StatusCodeParser, type Attribute, type Client, type SearchEntry, type SearchResponse } from 'ldapts';
import type { Lookup } from '../../desired/index.js';
import { guidToString } from './profiles.js';

/** The ldapts client methods used (not in its public types; present since ldapts 4, checked by the LDAP tests). */
interface ClientInternals {
  _ensureConnected(): Promise<void>;
  _nextMessageId(): number;
  _send(message: SearchRequest): Promise<SearchResponse | undefined>;
}

/** What one paged search asks for. */
export interface PagedSearch {
  base: string;
  scope: 'base' | 'one' | 'sub';
  filter: string;
  /** Only these attributes are asked for (never `*`). */
  attributes: string[];
  pageSize: number;
  timeLimitSeconds: number;
}

/** The server answered a paged search without the paged-results control: the read may be short. */
export class PagingIgnoredError extends Error {
  constructor() {
    super('answer without the paged-results control');
  }
}

/** The entries of a paged search, page by page, with the next page already asked for while a page is used. */
export async function* pagedSearch(client: Client, search: PagedSearch): AsyncGenerator<SearchEntry[]> {
  const c = client as unknown as ClientInternals;
  await c._ensureConnected();
  const control = new PagedResultsControl({ value: { size: search.pageSize } });
  const request = new SearchRequest({
    messageId: 0,
    baseDN: search.base,
    scope: search.scope,
    filter: FilterParser.parseString(search.filter),
    attributes: search.attributes,
    timeLimit: search.timeLimitSeconds,
    controls: [control],
  });
  const ask = () => {
    request.messageId = c._nextMessageId();
    return c._send(request);
  };
  let pending: Promise<SearchResponse | undefined> | undefined = ask();
  try {
    while (pending) {
      const answer = await pending;
      pending = undefined;
      if (answer?.status !== MessageResponseStatus.Success) throw StatusCodeParser.parse(answer);
      // RFC 2696: every answer to a paged search carries the control, the last one with an empty cookie.
      const paged = answer.controls?.find((x): x is PagedResultsControl => x instanceof PagedResultsControl);
      if (!paged) {
        if (answer.searchEntries.length > 0) throw new PagingIgnoredError();
        return;
      }
      const cookie = paged.value?.cookie;
      if (cookie && cookie.length > 0) {
        control.value = { size: search.pageSize, cookie };
        pending = ask();
      }
      yield answer.searchEntries;
    }
  } finally {
    // A page asked for and no longer wanted (the caller stopped): its failure when the connection closes is no error.
    pending?.catch(() => {});
  }
}

const NO_VALUES: readonly unknown[] = Object.freeze([]);

/**
 * Reads one entry at a time by attribute name, case-insensitively, with `dn` as a pseudo-attribute and objectGUID
 * decoded. Values as ldapts gave them to callers before: one value as itself, several as an array, none (or an
 * attribute the entry lacks) as an empty array; every value as a Buffer when one is not UTF-8. No copy of the entry
 * is made: `lookup` reads the current `entry` (set it before each use; the mapping reads it synchronously). A name
 * is matched as written first, then case-insensitively (`displayname` finds the server's `displayName`).
 */
export class EntryReader {
  entry!: SearchEntry;
  /** Names as asked for -> lower-cased. */
  private readonly lowered = new Map<string, string>();

  readonly lookup: Lookup = (name) => {
    const attrs = this.entry.attributes;
    for (let i = 0; i < attrs.length; i++) if (attrs[i]!.type === name) return valueOf(attrs[i]!);
    return this.other(name);
  };

  /**
   * The value under another spelling of `name`, or the DN for `dn`. Also the path of every attribute an entry lacks
   * (most entries lack some asked-for attributes), so it lower-cases only types of the right length.
   */
  private other(name: string): unknown {
    let key = this.lowered.get(name);
    if (key === undefined) {
      key = name.toLowerCase();
      this.lowered.set(name, key);
    }
    if (key === 'dn') return this.entry.name;
    const attrs = this.entry.attributes;
    for (let i = 0; i < attrs.length; i++) {
      const type = attrs[i]!.type;
      if (type.length === key.length && type.toLowerCase() === key) return valueOf(attrs[i]!);
    }
    // As before: an absent objectGUID reads as nothing (its first value), any other absent attribute as no values.
    return key === 'objectguid' ? undefined : NO_VALUES;
  }
}

/** A lookup into one entry (for the few entries held before mapping: departments). */
export function entryLookup(entry: SearchEntry): Lookup {
  const r = new EntryReader();
  r.entry = entry;
  return r.lookup;
}

function valueOf(a: Attribute): unknown {
  let values: readonly unknown[] = a.values;
  const guid = a.type.length === 10 && a.type.toLowerCase() === 'objectguid';
  if (guid || !allText(values)) values = a.parsedBuffers;
  if (guid) {
    const b = values[0];
    return Buffer.isBuffer(b) ? guidToString(b) : b;
  }
  return values.length === 1 ? values[0] : values;
}

function allText(values: readonly unknown[]): boolean {
  for (let i = 0; i < values.length; i++) if (typeof values[i] !== 'string') return false;
  return true;
}
