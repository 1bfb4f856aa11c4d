/**
 * Keeps the mirror current: a full walk when there is no watermark, when the last full walk is older than the
 * period, or when asked; otherwise an incremental walk from `watermark - overlap` that upserts changes and tombstones.
 * Watermarks are platform time (the first page's Date header), never the local clock.
 * The daemon lists pages from the platform client and hands them to the mirror (mirror/ knows nothing of HTTP).
 */
import { ENTITY_KINDS, type EntityKind } from '../domain/entities.js';
import type { Mirror, WalkHandle } from '../mirror/mirror.js';
import { platformError } from '../platform/errors.js';
import type { EntityRecords, OrgPlatformPort } from '../platform/port.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';

/** The largest page the platform serves. */
export const FULL_WALK_PAGE_SIZE = 200;
/** Records applied per transaction during a walk. */
export const DEFAULT_APPLY_BATCH_RECORDS = 1000;

type EntityRecord = EntityRecords[EntityKind];

/** The watermark of an entity the platform has shown nothing of yet: the next incremental walk reads everything. */
const EPOCH = new Date(0).toISOString();

/**
 * The platform's time when it served a page: its Date header (whole seconds), refined by the page's newest
 * updated_at when that falls within the same second; the newest updated_at alone without a Date header. Never an
 * updated_at beyond the Date: after the platform's clock went back, records keep stamps ahead of its time.
 */
function platformNow(date: string | undefined, newest: string | undefined): string | undefined {
  if (date === undefined) return newest;
  const d = Date.parse(date);
  const n = newest === undefined ? NaN : Date.parse(newest);
  return n >= d && n < d + 1000 ? newest : date;
}

/** The newest `updated_at` among records (RFC 3339), or undefined for none. */
function newestUpdatedAt(items: readonly EntityRecord[]): string | undefined {
  let newest = -Infinity;
  for (const item of items) {
    const ms = Date.parse(String((item as { updated_at?: unknown }).updated_at));
    if (ms > newest) newest = ms;
  }
  return Number.isFinite(newest) ? new Date(newest).toISOString() : undefined;
}

/** Inputs of refreshMirror. */
export interface RefreshMirrorOptions {
  client: Pick<OrgPlatformPort, 'listPage'>;
  mirror: Mirror;
  clock: Clock;
  logger: Logger;
  /** Incremental walks re-read this many seconds before the watermark (covers the platform's own delay and in-flight writes): state.mirror_overlap_seconds. */
  overlapSeconds: number;
  /** A full walk is taken when the last one is older than this: state.full_walk_every. */
  fullWalkEveryMs: number;
  /** Force a full walk of every entity. */
  full?: boolean;
  /** Page size (default 200, the maximum). */
  pageSize?: number;
  /** Records applied per transaction (default 1000). */
  applyBatchRecords?: number;
  /** Which entities (default all, in dependency order). */
  entities?: readonly EntityKind[];
  signal?: AbortSignal;
}

/** What one entity's walk did. */
export interface EntityRefreshResult {
  entity: EntityKind;
  mode: 'full' | 'incremental';
  /** List requests made (pages fetched). */
  pages: number;
  /** Records applied (a record listed twice counts twice). */
  records: number;
  tombstones: number;
  /** Records removed because a completed full walk did not see them. */
  removed: number;
  /** The entity's new watermark (platform time). */
  watermark: string;
}

/** What refreshMirror did, per entity. */
export interface RefreshMirrorResult {
  entities: EntityRefreshResult[];
}

/**
 * Refreshes every entity of the mirror. An error (after the client's own retries) stops the refresh; the entity
 * being walked keeps its old watermark, so the next refresh repeats that walk and nothing is missed: pages already
 * applied are upserted again, idempotently.
 */
export async function refreshMirror(options: RefreshMirrorOptions): Promise<RefreshMirrorResult> {
  const entities: EntityRefreshResult[] = [];
  for (const entity of options.entities ?? ENTITY_KINDS) {
    entities.push(await refreshEntity(entity, options));
  }
  return { entities };
}

/** Whether an entity's walk is a full one, and (incremental) from when: the watermark less the overlap. */
function walkMode(options: RefreshMirrorOptions, state: ReturnType<Mirror['state']>, startMs: number): { full: boolean; updatedSince: string | undefined } {
  const period = options.fullWalkEveryMs;
  const lastFull = state.lastFullWalkAt === undefined ? NaN : Date.parse(state.lastFullWalkAt);
  // A clock that went back behind the last full walk cannot say when the next is due: take one now.
  const full =
    options.full === true || state.watermark === undefined || Number.isNaN(lastFull) || startMs - lastFull >= period || startMs < lastFull;
  const overlapMs = options.overlapSeconds * 1000;
  return { full, updatedSince: full ? undefined : new Date(Date.parse(state.watermark!) - overlapMs).toISOString() };
}

async function refreshEntity(entity: EntityKind, options: RefreshMirrorOptions): Promise<EntityRefreshResult> {
  const { client, mirror, clock, signal } = options;
  const log = options.logger.child({ entity });
  const state = mirror.state(entity);
  const startMs = clock.now();
  const { full, updatedSince } = walkMode(options, state, startMs);
  const limit = options.pageSize ?? FULL_WALK_PAGE_SIZE;

  // The new watermark is the platform's own time when it served the walk's FIRST page (its Date header), never
  // the local clock: a local clock an hour ahead would otherwise put the watermark in the platform's future, and
  // later incremental walks would miss every change until the next full walk. The first page, not the last: a full
  // walk lists by creation order, so a record changed after the walk passed it was seen in its old state, and only
  // "everything changed since the walk began" is sure to include it; an incremental walk (ordered by change) is
  // safe from its start likewise. The Date header has whole seconds; the newest updated_at of the first page, when
  // later within that second, is as safe (every later change is newer than it) and re-reads less; it also stands
  // in when there is no Date header. With neither (an empty first page), the previous watermark stays. The overlap
  // covers what the platform changed between reading the first page and stamping it (and the Date header's whole
  // seconds), and writes still in flight.
  const startedAt = new Date(startMs).toISOString();
  let platformTime: string | undefined;
  const result: EntityRefreshResult = { entity, mode: full ? 'full' : 'incremental', pages: 0, records: 0, tombstones: 0, removed: 0, watermark: state.watermark ?? EPOCH };
  log.debug({ mode: result.mode, updatedSince }, 'mirror walk starting');

  // Pages are applied in batches of about `applyBatchRecords` records, one transaction each: with synchronous=FULL
  // every commit is an fsync, and one per 200-record page would dominate a full walk. Whatever is buffered is
  // applied before an error propagates, so every page that arrived is kept.
  const batchRecords = options.applyBatchRecords ?? DEFAULT_APPLY_BATCH_RECORDS;
  let walk: WalkHandle | undefined;
  let buffer: EntityRecord[] = [];
  const flush = () => {
    if (buffer.length === 0 || !walk) return;
    const applied = mirror.applyPage(entity, buffer, walk);
    result.records += applied.upserted;
    result.tombstones += applied.tombstones;
    buffer = [];
  };
  const fetchPage = (cursor: string) => {
    const p = client.listPage(entity, { limit, ...(cursor ? { cursor } : {}), ...(updatedSince ? { updated_since: updatedSince } : {}) }, signal ? { signal } : undefined);
    p.catch(() => {}); // observed when awaited; a prefetch abandoned by an earlier error must not be reported as unhandled
    return p;
  };
  try {
    let pending = fetchPage('');
    for (;;) {
      const page = await pending;
      result.pages += 1;
      if (result.pages === 1) {
        // The platform's own clock went back past the overlap (its Date, whole seconds, is more than a second before
        // watermark - overlap): changes it stamped since may be older than the watermark, and only a full walk is
        // sure to see them.
        const serverMs = page.server_time === undefined ? NaN : Date.parse(page.server_time);
        if (!full && serverMs + 1000 < Date.parse(updatedSince!)) {
          log.warn({ watermark: state.watermark, platform_time: page.server_time }, 'the platform\'s clock is behind the mirror watermark; taking a full walk');
          return await refreshEntity(entity, { ...options, full: true });
        }
        platformTime = platformNow(page.server_time, newestUpdatedAt(page.items));
      }
      // The walk begins in the state DB only once the first page has arrived: a refused credential leaves the mirror untouched.
      walk ??= mirror.beginWalk(entity, result.mode, startedAt);
      if (page.has_more) {
        if (!page.next_cursor) {
          throw platformError({ kind: 'invalid_response', message: `GET /org/${entity}: has_more is true but next_cursor is empty`, method: 'GET', route: `/org/${entity}`, code: 'next_cursor' });
        }
        // Ask for the next page before writing this one: the platform prepares it while SQLite writes.
        pending = fetchPage(page.next_cursor);
      }
      for (const item of page.items) buffer.push(item);
      if (buffer.length >= batchRecords || !page.has_more) flush();
      if (!page.has_more) break;
    }
  } finally {
    flush();
  }
  if (platformTime !== undefined) result.watermark = platformTime;
  const done = mirror.completeWalk(walk!, result.watermark, new Date(clock.now()).toISOString());
  result.removed = done.removed;
  log.info({ mode: result.mode, pages: result.pages, records: result.records, tombstones: result.tombstones, removed: result.removed }, 'mirror refreshed');
  return result;
}
