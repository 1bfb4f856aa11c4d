/**
 * The CSV connector: one streamed file per entity (csv-parse; iconv-lite for UTF-16LE, GB18030, GBK...).
 * Records are mapped as they are parsed, never all held as rows. Malformed CSV (bad quoting, a wrong column count,
 * a file ending inside quotes) fails the source: a dropped row would look like a deletion.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import iconv from 'iconv-lite';
import type { CsvSourceConfig } from '../../config/sources.js';
import type { EntityKind } from '../../domain/entities.js';
import { SourceCollector, type SourceBatch, type Lookup } from '../../desired/index.js';
import type { OrgsyncError } from '../../shared/errors.js';
import { sourceInvalid, sourceUnreadable, throwIfAborted, type ReadObserver, type SourceReadContext } from '../context.js';
import { parseCsvInThread, type CsvHandlers, type CsvParseOptions, type CsvRowsInput, type RecordSink } from './row-thread.js';

const UTF8 = new Set(['utf-8', 'utf8']);
const SNIFF_BYTES = 1 << 16;
const CANDIDATES = [',', ';', '\t', '|'];

/**
 * Files of at least `threadMinBytes` are parsed on a worker thread (row-thread.ts): about 150,000 members of a
 * typical export. The overlap saves time from about 40,000 members on (the thread starts in about 35 ms), but the
 * thread is a second V8 heap: issue 42 measured it at 16-20 MB of a daily run's peak at 100,000 members (149 MB on
 * one thread, 165 with the worker) for 0.2 s, so mid-sized files are read on this thread and large ones, where a
 * read takes seconds, on the worker. With one CPU there is nothing to overlap, and every file is parsed on this
 * thread. Tests set it to read small files both ways.
 */
export const csvReading = { threadMinBytes: availableParallelism() > 1 ? 16 << 20 : Number.POSITIVE_INFINITY };

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
    trace: ctx.observe?.trace,
    stage: ctx.stage,
    rank: ctx.rank,
    coverage: ctx.fieldCoverage ? { paths: false } : undefined,
  });
  const entities: [EntityKind, { file: string; encoding?: string | undefined; skip_rows?: number | undefined } | undefined][] = [
    ['departments', source.departments],
    ['positions', source.positions],
    ['members', source.members],
  ];
  for (const [entity, cfg] of entities) {
    if (!cfg || ctx.observe?.wants(entity) === false) continue;
    throwIfAborted(ctx.signal);
    const add: AddRecord =
      entity === 'departments' ? (l, at, line) => collector.addDepartment(l, at + line) : entity === 'positions' ? (l, at, line) => collector.addPosition(l, at + line) : (l, at, line) => collector.addMemberAt(l, at, line);
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
  add: AddRecord,
  ctx: SourceReadContext,
): Promise<void> {
  const path = ctx.resolvePath(file);
  const where = `${entity}: ${file}`;
  const enc = encoding.toLowerCase();
  if (!UTF8.has(enc) && !iconv.encodingExists(enc)) throw sourceUnreadable(source.name, `${where}: unknown encoding "${encoding}"`);

  const { head, size } = await readHead(source, where, path, enc, encoding);

  // A preview reads a few records and shows every column of each: on a thread only the mapped columns would cross.
  const threaded = size >= csvReading.threadMinBytes && ctx.observe === undefined;
  const feed = csvFeed({ source, entity, where, at: `${file}:`, collector, add, threaded, observe: ctx.observe });
  const input: CsvRowsInput = {
    path,
    encoding: enc,
    utf8: UTF8.has(enc),
    highWaterMark: 1 << 16,
    header: source.header,
    ...(feed.keep ? { keep: feed.keep } : {}),
    options: parseOptions(source, head, enc, skipRows),
  };
  try {
    if (threaded) await parseCsvInThread(input, feed.handlers, ctx.signal);
    else await parseCsvHere(input, feed.handlers, ctx.signal);
  } catch (err) {
    const failure = feed.failure();
    if (failure === STOP_READING) return;
    if (failure) throw failure;
    throwIfAborted(ctx.signal);
    throw csvReadError(source, entity, file, path, feed.index(), err);
  }
  if (feed.index() === undefined && source.header) throw sourceUnreadable(source.name, `${where}: the file is empty (no header row)`);
}

/** Hands one record to the collector: its fields through `lookup`, found at `line` of the file (`at`: `file:`). */
type AddRecord = (lookup: Lookup, at: string, line: number) => void;

/** Thrown from a record handler to end a preview's read once it has the records it wants; not a failure. */
const STOP_READING = Symbol('stop reading');

/** What csvFeed needs of one file's read. */
interface FeedOptions {
  source: CsvSourceConfig;
  entity: EntityKind;
  where: string;
  /** Every location's prefix (`file:`): one string fewer held per record. */
  at: string;
  collector: SourceCollector;
  add: AddRecord;
  threaded: boolean;
  observe: ReadObserver | undefined;
}

/**
 * The handlers one file's parse feeds: the header check, where each mapped name's value is in a record as it
 * arrives, and the lookup the mapping reads it through. `keep`: the columns to send when they are known before the
 * parse (no header); `failure()`: what a handler threw, which ends the parse.
 */
function csvFeed(o: FeedOptions) {
  const { source, entity, collector } = o;
  let index: Map<string, number> | undefined = source.header ? undefined : numberedColumns(source, entity, o.where, collector);
  let fieldsError: unknown;
  let fields: string[] = [];
  let base = 0;
  let idx: Record<string, number> = {};
  const lookup: Lookup = (name) => fields[base + idx[name]!];
  // On a thread only the columns the mapping reads cross over (a 60-column export mapped by 8 sends 8).
  const columnsToSend = (): number[] | undefined => {
    if (!o.threaded) return undefined;
    return [...new Set(collector.fieldNames(entity).map((n) => index!.get(n)!))].sort((a, b) => a - b);
  };
  /** Where each name's value is in the fields a record arrives with: its column, or its place among `sent`. */
  const locate = (sent: number[] | undefined) => {
    idx = {};
    for (const [name, column] of index!) {
      const place = sent ? sent.indexOf(column) : column;
      if (place !== -1) idx[name] = place;
    }
  };
  const header = (names: string[]): number[] | undefined => {
    try {
      index = checkHeader(source, entity, o.where, collector, names);
      return columnsToSend();
    } catch (err) {
      // Parsing stops: a file whose header cannot be mapped is not read further.
      fieldsError = err;
      throw err;
    }
  };
  const at = o.at;
  const add = o.add;
  const observe = o.observe;
  const record: RecordSink = (all, from, to, line) => {
    if (fieldsError) return;
    try {
      fields = all;
      base = from;
      const last = observe !== undefined && observe.record(entity, rawRecord(index, source.header, all, from, to), at + line);
      add(lookup, at, line);
      if (last) throw STOP_READING;
    } catch (err) {
      fieldsError = err;
      throw err;
    }
  };
  // Without a header the columns are known now.
  const keep = index !== undefined ? columnsToSend() : undefined;
  return { keep, handlers: { header, columns: locate, record } as CsvHandlers, failure: () => fieldsError, index: () => index };
}

/** The header's columns by name, once every name the mapping and the scope read is found among them. */
function checkHeader(source: CsvSourceConfig, entity: EntityKind, where: string, collector: SourceCollector, names: string[]): Map<string, number> {
  const index = new Map(names.map((n, i) => [n.trim(), i]));
  for (const [field, needs] of collector.fieldNamesByField(entity)) {
    for (const n of needs) {
      if (!index.has(n)) throw sourceUnreadable(source.name, `${where}: column "${n}" (${entity}.fields.${field}) is not in the header (${names.map((x) => x.trim()).join(', ')})`);
    }
  }
  for (const [key, n] of collector.scopeNames(entity)) {
    if (!index.has(n)) throw sourceUnreadable(source.name, `${where}: column "${n}" (${entity}.${key}) is not in the header (${names.map((x) => x.trim()).join(', ')})`);
  }
  return index;
}

/** Without a header, columns are named by number from 1: as many as the highest the mapping reads. */
function numberedColumns(source: CsvSourceConfig, entity: EntityKind, where: string, collector: SourceCollector): Map<string, number> {
  let max = 0;
  for (const n of collector.fieldNames(entity).map(Number)) if (Number.isInteger(n)) max = Math.max(max, n);
  const index = new Map(Array.from({ length: max }, (_, i) => [String(i + 1), i] as [string, number]));
  for (const n of collector.fieldNames(entity)) if (!index.has(n)) throw sourceUnreadable(source.name, `${where}: without a header, map columns by number ("1", "2", ...), not "${n}"`);
  return index;
}

/** One record as a preview shows it: every column by its header name (by number from 1 without a header). */
function rawRecord(index: Map<string, number> | undefined, header: boolean, all: string[], from: number, to: number): Record<string, string> {
  const raw: Record<string, string> = {};
  if (header && index) for (const [name, column] of index) raw[name] = all[from + column] ?? '';
  else for (let i = from; i < to; i++) raw[String(i - from + 1)] = all[i]!;
  return raw;
}

/** The first 64 KiB of a file (the byte-order mark, and the header line for `delimiter: auto`) and its size. */
async function readHead(source: CsvSourceConfig, where: string, path: string, enc: string, encoding: string): Promise<{ head: Buffer; size: number }> {
  let head: Buffer;
  let size: number;
  try {
    const fh = await open(path, 'r');
    try {
      const { buffer, bytesRead } = await fh.read(Buffer.alloc(SNIFF_BYTES), 0, SNIFF_BYTES, 0);
      head = buffer.subarray(0, bytesRead);
      size = (await fh.stat()).size;
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw sourceUnreadable(source.name, `${where}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, err);
  }
  if (UTF8.has(enc) && head.length >= 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))) {
    throw sourceUnreadable(source.name, `${where}: the file starts with a UTF-16 byte-order mark but encoding is ${encoding}; set encoding: utf-16le`);
  }
  return { head, size };
}

/** csv-parse's options for a source's file (the same on this thread and on a parser thread). */
function parseOptions(source: CsvSourceConfig, head: Buffer, enc: string, skipRows: number): CsvParseOptions {
  return {
    delimiter: source.delimiter === 'auto' ? sniffDelimiter(UTF8.has(enc) ? head.toString('utf8') : iconv.decode(head, enc), skipRows, source.comment, source.quote) : source.delimiter,
    quote: source.quote,
    bom: true,
    skip_empty_lines: true,
    relax_column_count: false,
    ...(skipRows > 0 ? { from_line: skipRows + 1 } : {}),
    ...(source.comment !== undefined ? { comment: source.comment } : {}),
  };
}

/** Parses `input` on this thread (small files: a worker thread costs more to start than it saves). */
async function parseCsvHere(input: CsvRowsInput, handlers: CsvHandlers, signal: AbortSignal | undefined): Promise<void> {
  const parser = parse(input.options);
  let sinkError: unknown;
  let header = input.header;
  if (!header) handlers.columns(undefined);
  // Records are handed over in the 'data' handler, which runs as each record is parsed, so parser.info.lines is
  // that record's (last) line. Cheaper than on_record, which builds an info object per record.
  parser.on('data', (record: string[]) => {
    try {
      if (header) {
        header = false;
        handlers.header(record);
        handlers.columns(undefined);
      } else handlers.record(record, 0, record.length, parser.info.lines);
    } catch (err) {
      sinkError = err;
      parser.destroy(err as Error);
    }
  });
  const file = createReadStream(input.path, { highWaterMark: input.highWaterMark });
  const opts = signal ? { signal } : {};
  try {
    if (input.utf8) await pipeline(file, parser, opts);
    else await pipeline(file, iconv.decodeStream(input.encoding), parser, opts);
  } catch (err) {
    throw sinkError ?? err;
  }
}

/** The source's error for a failed parse or read: malformed CSV names the file, line, column and column name. */
function csvReadError(source: CsvSourceConfig, entity: EntityKind, file: string, path: string, index: Map<string, number> | undefined, err: unknown): OrgsyncError {
  const e = err as { code?: string; message?: string; lines?: number; column?: number | string };
  if (e.code?.startsWith('CSV_') || e.code === 'INVALID_OPENING_QUOTE') {
    // csv-parse counts fields from 0; people count columns from 1, and the header names them.
    const col = typeof e.column === 'number' ? e.column + 1 : undefined;
    const name = col !== undefined && index ? [...index].find(([, i]) => i === col - 1)?.[0] : undefined;
    const place = `${file}:${e.lines ?? '?'}${col !== undefined ? `:${col}` : ''} (line ${e.lines ?? '?'}${col !== undefined ? `, column ${col}${name !== undefined && source.header ? ` "${name}"` : ''}` : ''})`;
    if (e.code === 'CSV_QUOTE_NOT_CLOSED') return sourceInvalid(source.name, `${entity}: ${place}: the file ends inside a quoted field (truncated or bad quoting): ${e.message}`, err);
    return sourceInvalid(source.name, `${entity}: ${place}: malformed CSV: ${e.message}`, err);
  }
  return sourceUnreadable(source.name, `${entity}: ${file}: cannot read ${path}: ${e.code ?? e.message ?? String(err)}`, err);
}
