/**
 * Microsoft Graph's delta query (https://learn.microsoft.com/en-us/graph/delta-query-users, .../api/user-delta):
 * - the watermark is an `@odata.deltaLink`. Before a full read it is taken with `$deltatoken=latest` on the delta
 *   URL (Graph answers a deltaLink of "now" and no users), so a change made during the full read is read next time;
 * - a delta read GETs the saved deltaLink and follows `@odata.nextLink` pages up to the new `@odata.deltaLink`. An
 *   item with `@removed` is gone (deleted, or out of the collection); any other item is new (sent whole) or changed
 *   (Graph sends the changed properties, merged onto the snapshot's record);
 * - a token Graph no longer knows (410 Gone, or an error whose code is syncStateNotFound, resyncRequired or an
 *   expired token; delta links of directory objects live about seven days) is answered by a full read.
 */
import type { HrisDeltaConfig } from '../../config/sources.js';
import { redactUrl } from '../../shared/redact.js';
import { sourceUnreadable, throwIfAborted } from '../context.js';
import { parseJson } from './body.js';
import { mergeChange, recordKey, type DeltaChanges, type DeltaDeps, type DeltaProtocol } from './delta-records.js';

type GraphDeltaConfig = Extract<HrisDeltaConfig, { type: 'graph' }>;

/** Error codes (and messages) by which Graph says a delta token can no longer be used. */
const RESYNC_CODES = /^(syncStateNotFound|resyncRequired|syncStateInvalid|expiredToken|tokenExpired|invalidDeltaToken)$/i;
const RESYNC_MESSAGE = /delta token (is )?expired|must be synchronized again/i;

const field = (body: unknown, key: string): unknown => (body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>)[key] : undefined);

/** Why Graph's answer means "read everything again", or undefined when it is another failure. */
export function resyncReason(status: number, body: unknown): string | undefined {
  const error = field(body, 'error');
  const code = field(error, 'code');
  const message = field(error, 'message');
  if (typeof code === 'string' && RESYNC_CODES.test(code)) return `Graph answered HTTP ${status} ${code}`;
  if (typeof message === 'string' && RESYNC_MESSAGE.test(message)) return `Graph answered HTTP ${status}: the delta token expired`;
  if (status === 410) return 'Graph answered HTTP 410 Gone';
  return undefined;
}

/** One delta page: its items and where it leads. */
interface DeltaPage {
  items: unknown[];
  next: URL | undefined;
  deltaLink: string | undefined;
  where: string;
}

/** GETs one page of a delta walk; `{ fallback }` when Graph no longer knows the token. */
async function getPage(deps: DeltaDeps, url: URL): Promise<DeltaPage | { fallback: string }> {
  const name = deps.source.name;
  const answer = await deps.reader.getText(url, { answer: (status) => status === 400 || status === 404 || status === 410 });
  const where = redactUrl(answer.url);
  let body: unknown;
  try {
    body = answer.text === '' ? undefined : JSON.parse(answer.text);
  } catch {
    body = undefined;
  }
  if (answer.status >= 300) {
    const reason = resyncReason(answer.status, body);
    if (reason !== undefined) return { fallback: reason };
    const code = field(field(body, 'error'), 'code');
    throw sourceUnreadable(name, `members: GET ${where} answered HTTP ${answer.status}${typeof code === 'string' ? ` ${code}` : ''}`);
  }
  body = parseJson(name, 'members', answer.text, where, false);
  const value = field(body, 'value');
  if (!Array.isArray(value)) throw sourceUnreadable(name, `members: ${where}: a delta page without a value array`);
  const nextLink = field(body, '@odata.nextLink');
  const deltaLink = field(body, '@odata.deltaLink');
  let next: URL | undefined;
  if (typeof nextLink === 'string' && nextLink !== '') {
    next = new URL(nextLink, answer.url);
    deps.reader.checkOrigin(next, 'an @odata.nextLink');
  }
  if (next === undefined && (typeof deltaLink !== 'string' || deltaLink === '')) throw sourceUnreadable(name, `members: ${where}: a delta page with neither @odata.nextLink nor @odata.deltaLink`);
  return { items: value, next, deltaLink: typeof deltaLink === 'string' ? deltaLink : undefined, where };
}

/** Walks a delta session from `first` to its deltaLink, handing each page's items to `onItems`. */
async function walkDelta(deps: DeltaDeps, first: URL, onItems: (items: unknown[], where: string) => void): Promise<{ deltaLink: string } | { fallback: string }> {
  const seen = new Set<string>();
  let url: URL | undefined = first;
  for (let n = 1; url !== undefined; n++) {
    throwIfAborted(deps.ctx.signal);
    if (n > deps.source.max_pages) throw sourceUnreadable(deps.source.name, `members: more than ${deps.source.max_pages} delta pages (max_pages); is the delta looping?`);
    if (seen.has(url.toString())) throw sourceUnreadable(deps.source.name, `members: the delta returned ${redactUrl(url)} twice`);
    seen.add(url.toString());
    const page = await getPage(deps, url);
    if ('fallback' in page) return page;
    onItems(page.items, page.where);
    if (page.next === undefined) {
      const link = new URL(page.deltaLink!, url);
      deps.reader.checkOrigin(link, 'an @odata.deltaLink');
      return { deltaLink: link.toString() };
    }
    url = page.next;
  }
  throw sourceUnreadable(deps.source.name, 'members: the delta ended without an @odata.deltaLink');
}

/** Microsoft Graph's delta protocol for `members.delta: { type: graph }`. */
export function graphDelta(config: GraphDeltaConfig, deps: DeltaDeps): DeltaProtocol {
  return {
    async watermarkBeforeFull() {
      const latest = new URL(config.url);
      latest.searchParams.set('$deltatoken', 'latest');
      const walked = await walkDelta(deps, latest, () => undefined);
      if ('fallback' in walked) throw sourceUnreadable(deps.source.name, `members: ${walked.fallback} when asked for the latest delta token (${redactUrl(latest)})`);
      return walked.deltaLink;
    },
    watermarkAfterFull() {
      throw new Error('Graph takes its watermark before the full read');
    },
    async changes(watermark) {
      const out: DeltaChanges = { put: new Map(), removed: new Set(), partial: true, watermark: '' };
      const walked = await walkDelta(deps, new URL(watermark), (items, where) => {
        items.forEach((item, i) => {
          const key = recordKey(deps, config.key, item, `${where}#$.value[${i}]`);
          if (field(item, '@removed') !== undefined) {
            out.put.delete(key);
            out.removed.add(key);
            return;
          }
          // The same user may come twice in one session: later properties win.
          out.removed.delete(key);
          const before = out.put.get(key);
          out.put.set(key, before === undefined ? item : mergeChange(before, item));
        });
      });
      if ('fallback' in walked) return walked;
      out.watermark = walked.deltaLink;
      return out;
    },
  };
}
