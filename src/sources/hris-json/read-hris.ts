/**
 * The HRIS JSON connector: a JSON file, or an HTTP(S) API walked page by page (pagination.ts). Any failed page
 * fails the whole source, and so does a walk that ends short of the total the source itself stated: a partial walk
 * would look like deletions. Values are read with field paths (shared/field-path.ts); a value of the wrong JSON type
 * quarantines its record (the field, the type found and the type expected), never coerced.
 */
import { readFile } from 'node:fs/promises';
import type { HrisJsonSourceConfig } from '../../config/sources.js';
import type { EntityKind } from '../../domain/entities.js';
import { jsonLookup, SourceCollector, type Lookup, type SourceBatch } from '../../desired/index.js';
import { sourceUnreadable, type SourceReadContext } from '../context.js';
import { itemsOf, parseJson, type EntityConfig } from './body.js';
import { authProvider } from '../http/auth.js';
import { HttpPageReader } from '../http/fetch-json.js';
import { walkPages } from './pagination.js';
import { readMembersByDelta } from './delta.js';

/** Reads a `type: hris-json` source. */
export async function readHrisJsonSource(source: HrisJsonSourceConfig, ctx: SourceReadContext): Promise<SourceBatch> {
  const collector = new SourceCollector({
    source: source.name,
    phoneRegion: source.phone_region,
    phoneCache: ctx.phoneCache,
    phonePolicy: source.phone_policy,
    authoritativeFields: source.authoritative_fields,
    timezone: ctx.timezone,
    departments: source.departments,
    positions: source.positions,
    members: source.members,
    trace: ctx.observe?.trace,
    stage: ctx.stage,
    rank: ctx.rank,
    coverage: ctx.fieldCoverage ? { paths: true } : undefined,
  });
  const entities: [EntityKind, EntityConfig | undefined][] = [
    ['departments', source.departments],
    ['positions', source.positions],
    ['members', source.members],
  ];
  const auth = authProvider(source.name, source.auth, ctx, source.timeout_ms);
  for (const [entity, cfg] of entities) {
    if (!cfg || ctx.observe?.wants(entity) === false) continue;
    const add = (l: Lookup, loc: string) =>
      entity === 'departments' ? collector.addDepartment(l, loc) : entity === 'positions' ? collector.addPosition(l, loc) : collector.addMember(l, loc);
    const delta = entity === 'members' ? source.members?.delta : undefined;
    if (ctx.delta && delta && cfg.url !== undefined) {
      // Issue 31: read by delta, or in full into the snapshot, as the run decided (hris-json/delta.ts).
      const reader = new HttpPageReader(source, entity, cfg.url, auth, ctx);
      await readMembersByDelta(ctx.delta, delta, { source, cfg, reader, ctx }, add);
      continue;
    }
    const pages =
      cfg.file !== undefined
        ? filePages(source, entity, cfg, ctx)
        : walkPages({ source: source.name, entity, cfg, maxPages: source.max_pages, reader: new HttpPageReader(source, entity, cfg.url!, auth, ctx), ctx });
    walk: for await (const { items, where, itemsPath } of pages) {
      const base = itemsPath === '' ? '$' : `$.${itemsPath}`;
      for (let i = 0; i < items.length; i++) {
        // A preview stops after its last record: leaving the loop ends the walk, so no further page is asked for.
        const last = ctx.observe?.record(entity, items[i], `${where}#${base}[${i}]`) === true;
        add(jsonLookup(items[i]), `${where}#${base}[${i}]`);
        if (last) break walk;
      }
    }
  }
  return collector.finish();
}

async function* filePages(source: HrisJsonSourceConfig, entity: EntityKind, cfg: EntityConfig, ctx: SourceReadContext): AsyncGenerator<{ items: unknown[]; where: string; itemsPath: string }> {
  const path = ctx.resolvePath(cfg.file!);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw sourceUnreadable(source.name, `${entity}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, err);
  }
  const body = parseJson(source.name, entity, text.replace(/^\ufeff/, ''), cfg.file!, true);
  yield { items: itemsOf(source.name, entity, cfg.items_path, body, cfg.file!), where: cfg.file!, itemsPath: cfg.items_path };
}
