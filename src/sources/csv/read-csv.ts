/**
 * The CSV connector: one streamed file per entity (csv-parse; iconv-lite for UTF-16LE, GB18030, GBK...).
 * Records are mapped as they are parsed, never all held as rows. Malformed CSV (bad quoting, a wrong column count,
 * a file ending inside quotes) fails the source: a dropped row would look like a deletion.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import iconv from 'iconv-lite';
import type { CsvSourceConfig } from '../../config/sources.js';
import type { EntityKind } from '../../domain/entities.js';
import { SourceCollector, type SourceBatch, type Lookup } from '../../desired/index.js';
import { sourceInvalid, sourceUnreadable, throwIfAborted, type SourceReadContext } from '../context.js';

const UTF8 = new Set(['utf-8', 'utf8']);
const SNIFF_BYTES = 1 << 16;
const CANDIDATES = [',', ';', '\t', '|'];

/**
 * `delimiter: auto`: the candidate (comma, semicolon, tab, pipe) that occurs most often outside quotes in the header
 * line (the first line after skip_rows that is neither empty nor a comment); a tie goes to the earlier candidate,
 * none at all to a comma (a one-column file).
 */
export function sniffDelimiter(text: string, skipRows: number, comment: string | undefined, quote: string): string {
  const lines = text.replace(/^\ufeff/, '').split(/\r?\n/).slice(skipRows);
  const header = lines.find((l) => l.trim() !== '' && (comment === undefined || !l.startsWith(comment))) ?? '';
  const counts = new Map(CANDIDATES.map((c) => [c, 0]));
  let quoted = false;
  for (const ch of header) {
    if (ch === quote) quoted = !quoted;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best = ',';
  let most = 0;
  for (const c of CANDIDATES) {
    if (counts.get(c)! > most) {
      best = c;
      most = counts.get(c)!;
    }
  }
  return best;
}

/** Reads a `type: csv` source. */
export async function readCsvSource(source: CsvSourceConfig, ctx: SourceReadContext): Promise<SourceBatch> {
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
  });
  const entities: [EntityKind, { file: string; encoding?: string | undefined; skip_rows?: number | undefined } | undefined][] = [
    ['departments', source.departments],
    ['positions', source.positions],
    ['members', source.members],
  ];
  for (const [entity, cfg] of entities) {
    if (!cfg) continue;
    throwIfAborted(ctx.signal);
    const add: (lookup: Lookup, location: string) => void =
      entity === 'departments' ? (l, loc) => collector.addDepartment(l, loc) : entity === 'positions' ? (l, loc) => collector.addPosition(l, loc) : (l, loc) => collector.addMember(l, loc);
    await readCsvFile(source, entity, cfg.file, cfg.encoding ?? source.encoding, cfg.skip_rows ?? source.skip_rows, collector, add, ctx);
  }
  return collector.finish();
}

async function readCsvFile(
  source: CsvSourceConfig,
  entity: EntityKind,
  file: string,
  encoding: string,
  skipRows: number,
  collector: SourceCollector,
  add: (lookup: Lookup, location: string) => void,
  ctx: SourceReadContext,
): Promise<void> {
  const path = ctx.resolvePath(file);
  const where = `${entity}: ${file}`;
  const enc = encoding.toLowerCase();
  if (!UTF8.has(enc) && !iconv.encodingExists(enc)) throw sourceUnreadable(source.name, `${where}: unknown encoding "${encoding}"`);

  let head: Buffer;
  try {
    const fh = await open(path, 'r');
    try {
      // The first 64 KiB: the byte-order mark, and the header line for `delimiter: auto`.
      const { buffer, bytesRead } = await fh.read(Buffer.alloc(SNIFF_BYTES), 0, SNIFF_BYTES, 0);
      head = buffer.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw sourceUnreadable(source.name, `${where}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, err);
  }
  if (UTF8.has(enc) && head.length >= 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))) {
    throw sourceUnreadable(source.name, `${where}: the file starts with a UTF-16 byte-order mark but encoding is ${encoding}; set encoding: utf-16le`);
  }

  let index: Map<string, number> | undefined;
  const headerCheck = (names: string[]) => {
    index = new Map(names.map((n, i) => [n.trim(), i]));
    for (const [field, needs] of collector.fieldNamesByField(entity)) {
      for (const n of needs) {
        if (!index.has(n)) throw sourceUnreadable(source.name, `${where}: column "${n}" (${entity}.fields.${field}) is not in the header (${names.map((x) => x.trim()).join(', ')})`);
      }
    }
    for (const [key, n] of collector.scopeNames(entity)) {
      if (!index.has(n)) throw sourceUnreadable(source.name, `${where}: column "${n}" (${entity}.${key}) is not in the header (${names.map((x) => x.trim()).join(', ')})`);
    }
  };
  if (!source.header) {
    // Without a header, columns are named by number from 1.
    const max = Math.max(0, ...collector.fieldNames(entity).map(Number).filter(Number.isInteger));
    index = new Map(Array.from({ length: max }, (_, i) => [String(i + 1), i]));
    for (const n of collector.fieldNames(entity)) if (!index.has(n)) throw sourceUnreadable(source.name, `${where}: without a header, map columns by number ("1", "2", ...), not "${n}"`);
  }

  let fieldsError: unknown;
  let row: string[] = [];
  let idx: Record<string, number> = {};
  const lookup: Lookup = (name) => row[idx[name]!];
  // Every location shares this prefix (one string fewer held per record).
  const at = `${file}:`;
  const delimiter = source.delimiter === 'auto' ? sniffDelimiter(UTF8.has(enc) ? head.toString('utf8') : iconv.decode(head, enc), skipRows, source.comment, source.quote) : source.delimiter;
  const parser = parse({
    delimiter,
    quote: source.quote,
    bom: true,
    skip_empty_lines: true,
    relax_column_count: false,
    ...(skipRows > 0 ? { from_line: skipRows + 1 } : {}),
    ...(source.comment !== undefined ? { comment: source.comment } : {}),
  });
  // Records are mapped in the 'data' handler, which runs as each record is parsed, so parser.info.lines is that
  // record's (last) line. Cheaper than on_record, which builds an info object per record.
  parser.on('data', (record: string[]) => {
    if (fieldsError) return;
    try {
      if (index === undefined) {
        headerCheck(record);
        idx = Object.fromEntries(index!);
        return;
      }
      row = record;
      add(lookup, at + parser.info.lines);
    } catch (err) {
      fieldsError = err;
    }
  });
  if (index !== undefined) idx = Object.fromEntries(index);
  const opts = ctx.signal ? { signal: ctx.signal } : {};
  try {
    if (UTF8.has(enc)) await pipeline(createReadStream(path, { highWaterMark: 1 << 16 }), parser, opts);
    else await pipeline(createReadStream(path, { highWaterMark: 1 << 16 }), iconv.decodeStream(enc), parser, opts);
  } catch (err) {
    if (fieldsError) throw fieldsError;
    throwIfAborted(ctx.signal);
    const e = err as { code?: string; message?: string; lines?: number; column?: number | string };
    if (e.code?.startsWith('CSV_') || e.code === 'INVALID_OPENING_QUOTE') {
      // csv-parse counts fields from 0; people count columns from 1, and the header names them.
      const col = typeof e.column === 'number' ? e.column + 1 : undefined;
      const name = col !== undefined && index ? [...index].find(([, i]) => i === col - 1)?.[0] : undefined;
      const place = `${file}:${e.lines ?? '?'}${col !== undefined ? `:${col}` : ''} (line ${e.lines ?? '?'}${col !== undefined ? `, column ${col}${name !== undefined && source.header ? ` "${name}"` : ''}` : ''})`;
      if (e.code === 'CSV_QUOTE_NOT_CLOSED') throw sourceInvalid(source.name, `${entity}: ${place}: the file ends inside a quoted field (truncated or bad quoting): ${e.message}`, err);
      throw sourceInvalid(source.name, `${entity}: ${place}: malformed CSV: ${e.message}`, err);
    }
    throw sourceUnreadable(source.name, `${where}: cannot read ${path}: ${e.code ?? e.message ?? String(err)}`, err);
  }
  if (fieldsError) throw fieldsError;
  if (index === undefined && source.header) throw sourceUnreadable(source.name, `${where}: the file is empty (no header row)`);
}
