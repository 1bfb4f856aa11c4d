/**
 * A large CSV file is parsed on a worker thread while the calling thread maps, normalises and checks the records
 * (issue 19: on a 2-core machine the two halves of the work overlap, so a read costs about what csv-parse alone
 * costs, not that plus the mapping). The thread runs the same csv-parse (and iconv-lite) with the same options as
 * the in-thread read and sends the fields of each batch of records as one flat list of strings, with each record's
 * end offset and line. Structured clone copies those strings into the caller's heap as plain strings, exactly as
 * csv-parse would have built them there, so nothing downstream can tell the two reads apart (test/sources/
 * csv-thread.test.ts compares them over random files and the malformed corpus).
 *
 * Flow control: the thread stops parsing while more than MAX_UNACKED batches wait for the caller, so a slow caller
 * never holds the whole file as messages.
 *
 * The worker's code is a string (evaluated as CommonJS): the same text runs under the compiled CLI and under the
 * tests, which load the TypeScript sources, where a separate worker file would not exist as JavaScript.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The csv-parse options both reads use (structured-clonable: strings, numbers and booleans). */
export interface CsvParseOptions {
  delimiter: string;
  quote: string;
  bom: boolean;
  skip_empty_lines: boolean;
  relax_column_count: boolean;
  from_line?: number;
  comment?: string;
}

/** What one file read needs: where, how it is encoded, how to parse it. */
export interface CsvRowsInput {
  path: string;
  /** Lower-cased; utf8 when `utf8` is true. */
  encoding: string;
  utf8: boolean;
  highWaterMark: number;
  options: CsvParseOptions;
  /** The first record is the header: it goes to `CsvHandlers.header`, which says which columns to send. */
  header: boolean;
  /** Without a header: the columns to send (ascending); absent: every column. */
  keep?: number[];
}

/** Receives records: fields[from..to) are one record's fields; `line` is csv-parse's info.lines for it. */
export type RecordSink = (fields: string[], from: number, to: number, line: number) => void;

/**
 * What a read hands its records to. `header` gets the header row (when the input has one) and returns the columns a
 * thread is to send of each record (ascending; undefined: every column); `columns` says, before records arrive and
 * whenever it changes, which columns they carry. A read on the calling thread hands over whole records.
 */
export interface CsvHandlers {
  header(names: string[]): number[] | undefined;
  /** The records that follow carry these columns of the file, in this order (undefined: every column). */
  columns(sent: number[] | undefined): void;
  record: RecordSink;
}

/** A parse or read error of the thread, as csv-parse (or fs) reported it. */
export interface CsvRowsError {
  code?: string;
  message: string;
  lines?: number;
  column?: number | string;
}

/** Parser threads started and still running (the tests check that every read leaves none behind). */
export const csvThreads = { started: 0, running: 0 };

/** Records per message: about 64 KiB of text each for a typical HR export. */
const BATCH_RECORDS = 512;
/** Batches sent and not yet taken by the caller before the thread stops reading the file. */
const MAX_UNACKED = 16;

const WORKER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { createReadStream } = require('node:fs');
const { once } = require('node:events');
const { finished } = require('node:stream/promises');
const { parse } = require(workerData.csvParse);
const input = workerData.input;
const parser = parse(input.options);
let fields = [];
let ends = [];
let lines = [];
let unacked = 0;
let wake = null;
let header = input.header;
// The columns to send: known from the start without a header, from the caller's answer to the header with one
// (every column until that answer arrives; each batch says which it carries).
let keep = input.keep;
const flush = () => {
  if (lines.length === 0) return;
  parentPort.postMessage({ type: 'records', fields, ends, lines, projected: keep !== undefined });
  fields = [];
  ends = [];
  lines = [];
  unacked++;
};
parentPort.on('message', (m) => {
  if (m !== 0) {
    flush();
    keep = m.keep ?? undefined;
    return;
  }
  unacked--;
  if (wake !== null && unacked <= ${MAX_UNACKED / 2}) {
    const w = wake;
    wake = null;
    w();
  }
});
// Records are taken in the 'data' handler, which runs as each record is parsed, so parser.info.lines is that
// record's line. The parser is never paused (records it parsed meanwhile would be handed over later, with a later
// line): the flow control holds back the file's bytes instead.
parser.on('data', (record) => {
  if (header) {
    header = false;
    parentPort.postMessage({ type: 'header', names: record });
    return;
  }
  if (keep !== undefined) for (let i = 0; i < keep.length; i++) fields.push(record[keep[i]]);
  else for (let i = 0; i < record.length; i++) fields.push(record[i]);
  ends.push(fields.length);
  lines.push(parser.info.lines);
  if (lines.length >= ${BATCH_RECORDS}) flush();
});
const done = finished(parser);
done.catch(() => undefined);
async function read() {
  const decoder = input.utf8 ? null : require(workerData.iconv).getDecoder(input.encoding);
  for await (const chunk of createReadStream(input.path, { highWaterMark: input.highWaterMark })) {
    const data = decoder === null ? chunk : decoder.write(chunk);
    if (data.length > 0 && !parser.write(data)) await once(parser, 'drain');
    if (parser.destroyed) break;
    if (unacked > ${MAX_UNACKED}) await new Promise((resolve) => (wake = resolve));
  }
  if (!parser.destroyed) {
    const rest = decoder === null ? '' : decoder.end() ?? '';
    if (rest.length > 0) parser.write(rest);
    parser.end();
  }
  await done;
}
read().then(
  () => {
    flush();
    parentPort.postMessage({ type: 'end' });
  },
  (err) => {
    // Records parsed before an error are sent first, as the in-thread read maps them before it sees the error.
    flush();
    const column = err.column;
    parentPort.postMessage({
      type: 'error',
      error: {
        code: typeof err.code === 'string' ? err.code : undefined,
        message: String(err.message ?? err),
        lines: typeof err.lines === 'number' ? err.lines : undefined,
        column: typeof column === 'number' || typeof column === 'string' ? column : undefined,
      },
    });
  },
);
`;

const require = createRequire(import.meta.url);

type Message =
  | { type: 'header'; names: string[] }
  | { type: 'records'; fields: string[]; ends: number[]; lines: number[]; projected: boolean }
  | { type: 'error'; error: CsvRowsError }
  | { type: 'end' };

/** Thrown (rejected) for an error the thread reported: the caller turns it into the source's error. */
export class CsvRowsFailure extends Error {
  constructor(readonly report: CsvRowsError) {
    super(report.message);
    this.name = 'CsvRowsFailure';
    Object.assign(this, report);
  }
}

/**
 * Parses `input` on a worker thread and hands the header and each record to `handlers` on this thread, in file order.
 * Resolves when the file was read whole; rejects with a CsvRowsFailure for a parse or read error (after the records
 * before it), with what a handler threw (the thread is stopped), or with the signal's reason when aborted.
 */
export function parseCsvInThread(input: CsvRowsInput, handlers: CsvHandlers, signal?: AbortSignal): Promise<void> {
  const aborted = () => (signal!.reason instanceof Error ? signal!.reason : new Error('reading sources was aborted'));
  if (signal?.aborted) return Promise.reject(aborted());
  return new Promise<void>((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { input, csvParse: require.resolve('csv-parse'), iconv: require.resolve('iconv-lite') },
    });
    csvThreads.started++;
    csvThreads.running++;
    let settled = false;
    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      // Settled once the thread is gone (also when it ended by itself): nothing of the read is left running.
      const settle = () => (err === undefined ? resolve() : reject(err));
      worker.terminate().then(settle, settle);
    };
    const onAbort = () => finish(aborted());
    signal?.addEventListener('abort', onAbort, { once: true });
    const sink = handlers.record;
    // The columns the thread sends once it has them (input.keep, or the answer to the header), and which the records
    // arriving now carry (each batch says: every column, or those).
    let keep = input.keep;
    let projected: boolean | undefined;
    worker.on('message', (m: Message) => {
      if (settled) return;
      if (m.type === 'header') {
        try {
          keep = handlers.header(m.names);
        } catch (err) {
          return finish(err);
        }
        worker.postMessage({ keep: keep ?? null });
      } else if (m.type === 'records') {
        try {
          if (m.projected !== projected) {
            projected = m.projected;
            handlers.columns(projected ? keep : undefined);
          }
          let from = 0;
          // An abort (settled) while the batch is mapped stops it there.
          for (let i = 0; i < m.ends.length && !settled; i++) {
            const to = m.ends[i]!;
            sink(m.fields, from, to, m.lines[i]!);
            from = to;
          }
        } catch (err) {
          return finish(err);
        }
        worker.postMessage(0);
      } else if (m.type === 'error') finish(new CsvRowsFailure(m.error));
      else finish();
    });
    worker.on('error', (err) => finish(err));
    worker.on('exit', (code) => {
      csvThreads.running--;
      finish(new Error(`the CSV parser thread stopped (exit code ${code}) before the end of ${input.path}`));
    });
  });
}
