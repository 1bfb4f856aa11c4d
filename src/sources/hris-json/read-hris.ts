/**
 * The HRIS JSON connector: a JSON file, or an HTTP(S) API walked page by page with undici (next-link, cursor or
 * page-number pagination). The source's headers go with every request. Any failed page fails the whole source:
 * a partial walk would look like deletions.
 */
import { readFile } from 'node:fs/promises';
import { request } from 'undici';
import type { HrisJsonSourceConfig, PaginationConfig } from '../../config/sources.js';
import type { EntityKind } from '../../domain/entities.js';
import { getPath, SourceCollector, type Lookup, type SourceBatch } from '../../desired/index.js';
import { redactUrl } from '../../shared/redact.js';
import { sourceUnreadable, throwIfAborted, type SourceReadContext } from '../context.js';

interface EntityConfig {
  url?: string | undefined;
  file?: string | undefined;
  items_path: string;
  pagination: PaginationConfig;
}

/** Reads a `type: hris-json` source. */
export async function readHrisJsonSource(source: HrisJsonSourceConfig, ctx: SourceReadContext): Promise<SourceBatch> {
  const collector = new SourceCollector({
    source: source.name,
    phoneRegion: source.phone_region,
    authoritativeFields: source.authoritative_fields,
    departments: source.departments,
    positions: source.positions,
    members: source.members,
  });
  const entities: [EntityKind, EntityConfig | undefined][] = [
    ['departments', source.departments],
    ['positions', source.positions],
    ['members', source.members],
  ];
  for (const [entity, cfg] of entities) {
    if (!cfg) continue;
    const add = (l: Lookup, loc: string) =>
      entity === 'departments' ? collector.addDepartment(l, loc) : entity === 'positions' ? collector.addPosition(l, loc) : collector.addMember(l, loc);
    for await (const { items, where } of pages(source, entity, cfg, ctx)) {
      const base = cfg.items_path === '' ? '$' : `$.${cfg.items_path}`;
      for (let i = 0; i < items.length; i++) {
        const item = items[i];
        add((name) => getPath(item, name), `${where}#${base}[${i}]`);
      }
    }
  }
  return collector.finish();
}

function itemsOf(source: string, entity: EntityKind, cfg: EntityConfig, body: unknown, where: string): unknown[] {
  const items = getPath(body, cfg.items_path);
  if (!Array.isArray(items)) {
    const found = items === undefined ? 'nothing' : items === null ? 'null' : `a${typeof items === 'object' ? 'n object' : ` ${typeof items}`}`;
    throw sourceUnreadable(source, `${entity}: ${where}: items_path "${cfg.items_path}" does not lead to an array (found ${found})`);
  }
  return items;
}

function parseJson(source: string, entity: EntityKind, text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw sourceUnreadable(source, `${entity}: ${where}: malformed JSON: ${(err as Error).message}`, err);
  }
}

async function* pages(source: HrisJsonSourceConfig, entity: EntityKind, cfg: EntityConfig, ctx: SourceReadContext): AsyncGenerator<{ items: unknown[]; where: string }> {
  if (cfg.file !== undefined) {
    const path = ctx.resolvePath(cfg.file);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw sourceUnreadable(source.name, `${entity}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, err);
    }
    yield { items: itemsOf(source.name, entity, cfg, parseJson(source.name, entity, text.replace(/^\ufeff/, ''), cfg.file), cfg.file), where: cfg.file };
    return;
  }
  const p = cfg.pagination;
  let url = new URL(cfg.url!);
  let page = p.type === 'page' || p.type === 'offset' ? p.start : 0;
  const seen = new Set<string>();
  for (let n = 1; ; n++) {
    throwIfAborted(ctx.signal);
    if (n > source.max_pages) throw sourceUnreadable(source.name, `${entity}: more than ${source.max_pages} pages (max_pages); is the pagination looping?`);
    if (p.type === 'page') {
      url.searchParams.set(p.page_param, String(page));
      if (p.size_param) url.searchParams.set(p.size_param, String(p.size));
    } else if (p.type === 'offset') {
      url.searchParams.set(p.offset_param, String(page));
      url.searchParams.set(p.size_param, String(p.size));
    } else if (p.type === 'cursor' && p.size_param && p.size) url.searchParams.set(p.size_param, String(p.size));
    // Locations and messages show the URL through the redactor (no userinfo, no query values: a `next` link
    // may carry an access token); loop detection compares the full URL.
    const where = redactUrl(url);
    const full = url.toString();
    if (seen.has(full)) throw sourceUnreadable(source.name, `${entity}: the pagination returned ${where} twice`);
    seen.add(full);
    const body = await fetchJson(source, entity, url, ctx);
    const items = itemsOf(source.name, entity, cfg, body, where);
    yield { items, where };
    if (p.type === 'none') return;
    if (p.type === 'next-link') {
      const next = getPath(body, p.next_path);
      if (next === undefined || next === null || next === '') return;
      if (typeof next !== 'string') throw sourceUnreadable(source.name, `${entity}: ${where}: next_path "${p.next_path}" is not a URL`);
      url = new URL(next, url);
    } else if (p.type === 'cursor') {
      const cursor = getPath(body, p.cursor_path);
      if (cursor === undefined || cursor === null || cursor === '') return;
      if (typeof cursor !== 'string' && typeof cursor !== 'number') throw sourceUnreadable(source.name, `${entity}: ${where}: cursor_path "${p.cursor_path}" is not a string`);
      url = new URL(url);
      url.searchParams.set(p.cursor_param, String(cursor));
    } else {
      if (items.length < p.size || items.length === 0) return;
      page += p.type === 'page' ? 1 : items.length;
      url = new URL(url);
    }
  }
}

const RETRYABLE = new Set([429, 500, 502, 503, 504]);

async function fetchJson(source: HrisJsonSourceConfig, entity: EntityKind, url: URL, ctx: SourceReadContext): Promise<unknown> {
  const where = redactUrl(url);
  for (let attempt = 1; ; attempt++) {
    let status: number;
    let text: string;
    let retryAfter: string | string[] | undefined;
    try {
      const res = await request(url, {
        method: 'GET',
        headers: { accept: 'application/json', ...source.headers },
        headersTimeout: source.timeout_ms,
        bodyTimeout: source.timeout_ms,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
      status = res.statusCode;
      retryAfter = res.headers['retry-after'];
      text = await res.body.text();
    } catch (err) {
      throwIfAborted(ctx.signal);
      if (attempt < source.max_attempts) {
        await ctx.clock.sleep(backoff(attempt), ctx.signal);
        continue;
      }
      const code = (err as { code?: string }).code;
      throw sourceUnreadable(source.name, `${entity}: GET ${where} failed: ${code ?? (err as Error).message}`, err);
    }
    if (status >= 200 && status < 300) return parseJson(source.name, entity, text, where);
    if (RETRYABLE.has(status) && attempt < source.max_attempts) {
      const ra = Number(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
      ctx.logger.warn({ source: source.name, entity, status, attempt }, 'HRIS request will be retried');
      await ctx.clock.sleep(Number.isFinite(ra) && ra > 0 ? Math.min(ra, 300) * 1000 : backoff(attempt), ctx.signal);
      continue;
    }
    throw sourceUnreadable(source.name, `${entity}: GET ${where} answered HTTP ${status}`);
  }
}

function backoff(attempt: number): number {
  return Math.min(30_000, 500 * 2 ** (attempt - 1));
}
