/**
 * Walking the pages of one HRIS URL. Each pagination kind is a named entry of PAGINATIONS: how its first request
 * looks, where its next page is, and the total it states, if any. The walk around them is shared:
 * - a page URL that comes back, or a cursor that comes back, fails the read (a loop, never an endless walk);
 * - a next link or a redirect to another origin is refused unless allowed_origins lists it (fetch-json.ts);
 * - when the source stated a total (SCIM totalResults, OData @odata.count / d.__count, or `total_path`) and fewer
 *   records arrived, the read fails: a walk that ended early would look like people leaving.
 */
import type { PaginationConfig } from '../../config/sources.js';
import type { EntityKind } from '../../domain/entities.js';
import { getPath } from '../../desired/index.js';
import { sourceUnreadable, throwIfAborted, type SourceReadContext } from '../context.js';
import { redactUrl, registerPagingParams } from '../../shared/redact.js';
import type { HttpPageReader } from '../http/fetch-json.js';
import { itemsOf, parseJson, type EntityConfig } from './body.js';

/** One page read. */
export interface Page {
  items: unknown[];
  where: string;
  itemsPath: string;
  /** The response's Date header (a delta read's watermark is the server's time). */
  date?: string | undefined;
}

/** What one kind of pagination answers about a page it was given. */
interface Step {
  /** The next page's URL; undefined: this was the last page. */
  next: URL | undefined;
  /** Where the next page came from, for the origin check ("a next link"); undefined when built from the URL itself. */
  linked?: string;
  /** The cursor that leads to the next page, for the loop check. */
  cursor?: string;
}

interface Kind<P extends PaginationConfig> {
  /** The items path when the config leaves it empty. */
  itemsPath(cfg: EntityConfig, body: unknown): string;
  /** The first page's URL. */
  first(url: URL, p: P): URL;
  /** After a page: where the next one is. `received` counts the records read so far, this page included. */
  step(ctx: { body: unknown; url: URL; items: unknown[]; received: number; stated: number | undefined; fail: (detail: string) => never }, p: P): Step;
  /** The total the response states, if this kind has one. */
  total?(body: unknown): unknown;
}

type KindOf<T extends PaginationConfig['type']> = Kind<Extract<PaginationConfig, { type: T }>>;

const configured = (cfg: EntityConfig) => cfg.items_path;

const linkTo = (value: unknown, url: URL, what: string, fail: (d: string) => never): URL | undefined => {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') fail(`${what} is not a URL`);
  try {
    return new URL(value as string, url);
  } catch {
    return fail(`${what} is not a URL`);
  }
};

const withParams = (url: URL, params: Record<string, string | number | undefined>): URL => {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, String(v));
  return u;
};

const odataValue = (body: unknown, key: string): unknown => (body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>)[key] : undefined);
const odataD = (body: unknown): unknown => odataValue(body, 'd');

/** The pagination kinds. */
export const PAGINATIONS: { [T in PaginationConfig['type']]: KindOf<T> } = {
  none: {
    itemsPath: configured,
    first: (url) => url,
    step: () => ({ next: undefined }),
  },
  'next-link': {
    itemsPath: configured,
    first: (url) => url,
    step: ({ body, url, fail }, p) => ({ next: linkTo(getPath(body, p.next_path), url, `next_path "${p.next_path}"`, fail), linked: 'a next link' }),
  },
  cursor: {
    itemsPath: configured,
    first: (url, p) => (p.size_param && p.size ? withParams(url, { [p.size_param]: p.size }) : url),
    step: ({ body, url, fail }, p) => {
      const cursor = getPath(body, p.cursor_path);
      if (cursor === undefined || cursor === null || cursor === '') return { next: undefined };
      if (typeof cursor !== 'string' && typeof cursor !== 'number') fail(`cursor_path "${p.cursor_path}" is not a string`);
      return { next: withParams(url, { [p.cursor_param]: String(cursor) }), cursor: String(cursor) };
    },
  },
  page: {
    itemsPath: configured,
    first: (url, p) => withParams(url, { [p.page_param]: p.start, ...(p.size_param ? { [p.size_param]: p.size } : {}) }),
    step: ({ url, items }, p) => {
      if (items.length < p.size || items.length === 0) return { next: undefined };
      return { next: withParams(url, { [p.page_param]: Number(url.searchParams.get(p.page_param)) + 1 }) };
    },
  },
  offset: {
    itemsPath: configured,
    first: (url, p) => withParams(url, { [p.offset_param]: p.start, [p.size_param]: p.size }),
    step: ({ url, items }, p) => {
      if (items.length < p.size || items.length === 0) return { next: undefined };
      return { next: withParams(url, { [p.offset_param]: Number(url.searchParams.get(p.offset_param)) + items.length }) };
    },
  },
  scim: {
    // RFC 7644 3.4.2: a ListResponse holds Resources, totalResults, startIndex (1-based) and itemsPerPage.
    itemsPath: (cfg) => cfg.items_path || 'Resources',
    first: (url, p) => withParams(url, { [p.start_index_param]: 1, [p.count_param]: p.count }),
    total: (body) => odataValue(body, 'totalResults'),
    step: ({ url, items, received, stated }, p) => {
      if (items.length === 0) return { next: undefined };
      if (stated !== undefined && received >= stated) return { next: undefined };
      const start = Number(url.searchParams.get(p.start_index_param));
      return { next: withParams(url, { [p.start_index_param]: start + items.length }) };
    },
  },
  odata: {
    // OData v4: value + @odata.nextLink (+ @odata.count when $count=true); v2 (SAP SuccessFactors): d.results + d.__next (+ d.__count).
    itemsPath: (cfg, body) => cfg.items_path || (odataD(body) !== undefined && odataValue(body, 'value') === undefined ? 'd.results' : 'value'),
    first: (url) => url,
    total: (body) => {
      const v4 = odataValue(body, '@odata.count');
      return v4 !== undefined ? v4 : odataValue(odataD(body), '__count');
    },
    step: ({ body, url, fail }) => {
      const v4 = odataValue(body, '@odata.nextLink');
      const next = v4 !== undefined ? v4 : odataValue(odataD(body), '__next');
      return { next: linkTo(next, url, v4 !== undefined ? '@odata.nextLink' : 'd.__next', fail), linked: 'a next link' };
    },
  },
};

/** What walkPages needs. */
export interface WalkOptions {
  source: string;
  entity: EntityKind;
  cfg: EntityConfig;
  maxPages: number;
  reader: HttpPageReader;
  ctx: SourceReadContext;
}

function parseTotal(value: unknown): number | undefined | 'bad' {
  if (value === undefined || value === null) return undefined;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  return Number.isInteger(n) && n >= 0 ? n : 'bad';
}

/** The query parameters each kind sets itself: their values are paging positions, shown in locations (issue 45). */
function pagingParamsOf(p: PaginationConfig): string[] {
  switch (p.type) {
    case 'page':
      return [p.page_param, p.size_param ?? ''];
    case 'offset':
      return [p.offset_param, p.size_param];
    case 'cursor':
      return [p.cursor_param, p.size_param ?? ''];
    case 'scim':
      return [p.start_index_param, p.count_param];
    case 'odata':
      return ['$skip', '$top', '$skiptoken'];
    default:
      return [];
  }
}

/** Query parameters whose values differ between a page's URL and the next one's: the server's paging positions. */
function changedParams(from: URL, to: URL): string[] {
  const names = new Set([...from.searchParams.keys(), ...to.searchParams.keys()]);
  return [...names].filter((n) => from.searchParams.getAll(n).join('\u0000') !== to.searchParams.getAll(n).join('\u0000'));
}

/** One page fetched: its body, or `ended` when the server answered that the list is over (204, an empty body). */
type Fetched = { answered: URL; where: string; date: string | undefined; header: (name: string) => string | undefined } & ({ ended: string } | { body: unknown });

async function fetchPage(o: WalkOptions, url: URL): Promise<Fetched> {
  const { text, url: answered, status, header, date } = await o.reader.getText(url, { method: o.cfg.method, body: o.cfg.body });
  const where = redactUrl(answered);
  // Past the last page some APIs answer 204 No Content (ADP) or an empty body: the end of the list, not bad JSON.
  if (status === 204) return { answered, where, date, header, ended: 'HTTP 204 No Content' };
  if (text.trim() === '') return { answered, where, date, header, ended: `an empty body (HTTP ${status})` };
  return { answered, where, date, header, body: parseJson(o.source, o.entity, text, where, false) };
}

/** The totals a page states: its kind's own, `total_path` in the body, `total_header` among the headers. */
function statedTotals(o: WalkOptions, kind: Kind<PaginationConfig>, page: Fetched): [string, unknown][] {
  const { cfg } = o;
  const totals: [string, unknown][] = [];
  const body = 'body' in page ? page.body : undefined;
  if (kind.total && body !== undefined) totals.push([cfg.pagination.type === 'scim' ? 'totalResults' : '@odata.count', kind.total(body)]);
  if (cfg.total_path !== undefined && body !== undefined) totals.push([`total_path "${cfg.total_path}"`, getPath(body, cfg.total_path)]);
  if (cfg.total_header !== undefined) totals.push([`header ${cfg.total_header}`, page.header(cfg.total_header)]);
  return totals;
}

/** Walks every page of one entity's URL. */
export async function* walkPages(o: WalkOptions): AsyncGenerator<Page> {
  const { source, entity, cfg, ctx } = o;
  const p = cfg.pagination;
  const kind = PAGINATIONS[p.type] as Kind<PaginationConfig>;
  registerPagingParams(pagingParamsOf(p));
  let url: URL | undefined = kind.first(new URL(cfg.url!), p);
  const seenUrls = new Set<string>();
  const seenCursors = new Map<string, number>();
  let received = 0;
  let stated: { n: number; from: string } | undefined;
  for (let n = 1; url !== undefined; n++) {
    throwIfAborted(ctx.signal);
    if (n > o.maxPages) throw sourceUnreadable(source, `${entity}: more than ${o.maxPages} pages (max_pages); is the pagination looping?`);
    // Locations and messages show URLs through the redactor (no userinfo; query values only of paging positions: a
    // next link may carry an access token); the loop check compares the full URL.
    const requested = url.toString();
    if (seenUrls.has(requested)) throw sourceUnreadable(source, `${entity}: the pagination returned ${redactUrl(url)} twice`);
    seenUrls.add(requested);
    const page = await fetchPage(o, url);
    for (const [from, value] of statedTotals(o, kind, page)) {
      const t = parseTotal(value);
      if (t === 'bad') throw sourceUnreadable(source, `${entity}: ${page.where}: ${from} is not a count of records`);
      if (t !== undefined) stated = { n: t, from };
    }
    if ('ended' in page) {
      ctx.logger.debug({ source, entity, page: n, url: page.where }, `HRIS answered ${page.ended}: the list ends here`);
      break;
    }
    const step = yield* pageOf(o, kind, page, { n, received, stated: stated?.n });
    received += step.items;
    if (step.next === undefined) break;
    if (step.cursor !== undefined) {
      const before = seenCursors.get(step.cursor);
      if (before !== undefined) {
        const shown = step.cursor.length > 40 ? `${step.cursor.slice(0, 40)}...` : step.cursor;
        throw sourceUnreadable(source, `${entity}: page ${n} gave the cursor "${shown}" that page ${before} gave already: the pagination is looping; the read stops`);
      }
      seenCursors.set(step.cursor, n);
    }
    registerPagingParams(changedParams(page.answered, step.next), true);
    url = step.next;
  }
  if (stated !== undefined && received < stated.n) {
    throw sourceUnreadable(
      source,
      `${entity}: short read: the source stated ${stated.n} records (${stated.from}) but the walk ended after ${received}; nothing is written from a partial read`,
    );
  }
}

/** Yields one page's records and says where the next page is (undefined: none, or an empty page ends the list). */
async function* pageOf(o: WalkOptions, kind: Kind<PaginationConfig>, page: Fetched & { body: unknown }, at: { n: number; received: number; stated: number | undefined }): AsyncGenerator<Page, { items: number; next?: URL; cursor?: string }> {
  const { source, entity, cfg, reader, ctx } = o;
  const p = cfg.pagination;
  const fail = (detail: string): never => {
    throw sourceUnreadable(source, `${entity}: ${page.where}: ${detail}`);
  };
  const itemsPath = kind.itemsPath(cfg, page.body);
  const items = itemsOf(source, entity, itemsPath, page.body, page.where);
  yield { items, where: page.where, itemsPath, date: page.date };
  const step = kind.step({ body: page.body, url: page.answered, items, received: at.received + items.length, stated: at.stated, fail }, p);
  if (step.next === undefined) return { items: items.length };
  if (items.length === 0 && (!('end_on_empty' in p) || p.end_on_empty)) {
    ctx.logger.debug({ source, entity, page: at.n, url: page.where }, 'HRIS answered an empty list: the list ends here (pagination.end_on_empty)');
    return { items: 0 };
  }
  if (step.linked) reader.checkOrigin(step.next, step.linked);
  return { items: items.length, next: step.next, ...(step.cursor !== undefined ? { cursor: step.cursor } : {}) };
}
