/**
 * The sample `orgsync sources suggest` reads: a saved API response (JSON: an array of records, or an object with the
 * list under a key vendors use) or a CSV export (its header). Turned into the leaf paths a mapping could read, each
 * with how many records gave it a value and one value seen, in the field-path syntax of shared/field-path.ts.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { filterStep, formatPath, getPath, type PathStep } from '../../desired/index.js';
import { OrgsyncError } from '../../shared/errors.js';
import { sniffDelimiter } from '../csv/read-csv.js';

/** One path a mapping could read. */
export interface SampleKey {
  /** The field spec that reads it: a CSV column's name, or a field path. */
  path: string;
  /** The key steps of the path and the qualifiers of its filters (`[type=mobile]` gives `mobile`), for matching. */
  steps: PathStep[];
  /** Records (of those looked at) with a non-empty value there; CSV headers have no values (0). */
  filled: number;
  /** A value seen there, if any. */
  example?: string;
  /** Distinct values seen there, as text (at most VALUES_KEPT), and the JSON types they had. */
  values: string[];
  types: Set<'string' | 'number' | 'boolean'>;
}

/** A sample read. */
export interface Sample {
  file: string;
  kind: 'csv' | 'json';
  /** JSON: where the records were found (`` for a bare array). */
  itemsPath?: string;
  /** JSON: the records looked at. */
  records: unknown[];
  keys: SampleKey[];
}

/** Keys vendors put their list of records under, tried in this order (an object under one is searched once more). */
export const RECORD_KEYS = ['value', 'Resources', 'employees', 'users', 'Report_Entry', 'd.results', 'data', 'results', 'items', 'records', 'people', 'workers', 'departments'];

/** Records looked at for keys and values (a sample of a big response does not need all of them). */
const RECORDS_LOOKED_AT = 200;
/** Elements of one array looked at (phone and e-mail lists). */
const ELEMENTS_LOOKED_AT = 5;
/** Distinct values kept per key (for status values and the checks of dates and addresses). */
const VALUES_KEPT = 20;

const invalid = (file: string, detail: string, cause?: unknown) => new OrgsyncError('SAMPLE_INVALID', `sources suggest: ${file}: ${detail}`, cause === undefined ? undefined : { cause });

/** Reads a sample file; `recordsPath` (a preset's items_path) is tried before the usual keys. */
export function readSample(file: string, recordsPath?: string): Sample {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').replace(/^\ufeff/, '');
  } catch (err) {
    throw invalid(file, `cannot read the file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, err);
  }
  const first = text.trimStart()[0];
  const json = /\.json$/i.test(file) || ((first === '{' || first === '[') && !/\.(csv|tsv|txt)$/i.test(file));
  return json ? jsonSample(file, text, recordsPath) : csvSample(file, text);
}

function csvSample(file: string, text: string): Sample {
  let rows: string[][];
  try {
    rows = parse(text.slice(0, 1 << 16), { delimiter: sniffDelimiter(text.slice(0, 1 << 16), 0, undefined, '"'), to_line: 1, relax_column_count: true, skip_empty_lines: true }) as string[][];
  } catch (err) {
    throw invalid(file, `the CSV header does not parse: ${(err as Error).message}`, err);
  }
  const header = (rows[0] ?? []).map((n) => n.trim()).filter((n) => n !== '');
  if (header.length === 0) throw invalid(file, 'no CSV header (the first line names no column)');
  return { file, kind: 'csv', records: [], keys: header.map((name) => ({ path: name, steps: [{ kind: 'key', key: name }], filled: 0, values: [], types: new Set() })) };
}

function jsonSample(file: string, text: string, recordsPath: string | undefined): Sample {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw invalid(file, `not JSON: ${(err as Error).message}`, err);
  }
  const found = findRecords(body, recordsPath);
  if (found === undefined) {
    const tried = [...(recordsPath ? [recordsPath] : []), ...RECORD_KEYS].join(', ');
    throw invalid(file, `no list of records found: the file is neither an array of objects nor an object with one under ${tried} (also one level down, as in data.employees)`);
  }
  const records = found.records.slice(0, RECORDS_LOOKED_AT);
  return { file, kind: 'json', itemsPath: found.path, records, keys: leafKeys(records) };
}

const isRecordList = (v: unknown): v is unknown[] => Array.isArray(v) && v.length > 0 && v.some((e) => e !== null && typeof e === 'object' && !Array.isArray(e));

/** The records of a response: a bare array, the preset's path, a usual key, or a usual key under one of them. */
function findRecords(body: unknown, recordsPath: string | undefined): { path: string; records: unknown[] } | undefined {
  if (isRecordList(body)) return { path: '', records: body };
  const paths = [...(recordsPath ? [recordsPath] : []), ...RECORD_KEYS];
  for (const outer of ['', ...RECORD_KEYS]) {
    const at = outer === '' ? body : getPath(body, outer);
    if (at === null || typeof at !== 'object' || Array.isArray(at)) continue;
    for (const p of paths) {
      const v = getPath(at, p);
      if (isRecordList(v)) return { path: outer === '' ? p : `${outer}.${p}`, records: v };
    }
  }
  return undefined;
}

/** Every leaf path of the records, in the order first met, with how many records fill it and the values seen. */
function leafKeys(records: unknown[]): SampleKey[] {
  const keys = new Map<string, SampleKey>();
  for (const record of records) {
    const seen = new Set<string>();
    walk(record, [], 0, (steps, value) => {
      const path = formatPath(steps);
      let key = keys.get(path);
      if (key === undefined) keys.set(path, (key = { path, steps, filled: 0, values: [], types: new Set() }));
      const text = value === null || value === undefined ? '' : String(value).trim();
      if (text === '') return;
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') key.types.add(typeof value as 'string' | 'number' | 'boolean');
      if (key.values.length < VALUES_KEPT && !key.values.includes(text)) key.values.push(text);
      if (!seen.has(path)) {
        seen.add(path);
        key.filled++;
        key.example ??= text;
      }
    });
  }
  return [...keys.values()];
}

/** Keys that mark an element of a list as the primary one (`primary: true`, ADP's `primaryIndicator: true`). */
const PRIMARY_KEYS = ['primary', 'primaryIndicator', 'isPrimary', 'preferred'];
/** Keys whose text says what an element of a list is (`type: work`, ADP's `nameCode.codeValue: Work E-mail`). */
const QUALIFIER_KEYS: string[][] = [['type'], ['use'], ['kind'], ['label'], ['typeCode', 'codeValue'], ['nameCode', 'codeValue'], ['type', 'value']];

/** The qualifier of an element: the first qualifier key holding text, as a filter condition. */
function qualifierOf(o: Record<string, unknown>): { key: string[]; value: string } | undefined {
  for (const key of QUALIFIER_KEYS) {
    let cur: unknown = o;
    for (const k of key) cur = cur !== null && typeof cur === 'object' && !Array.isArray(cur) ? (cur as Record<string, unknown>)[k] : undefined;
    if (typeof cur === 'string' && cur.trim() !== '') return { key, value: cur };
  }
  return undefined;
}

/**
 * Walks one value: scalars and nulls are leaves; arrays of scalars are read at [0]; arrays of objects by their
 * primary element (`[primary=true]`), by what each element is (`[type=work]`, `[nameCode.codeValue=Work E-mail]`,
 * `[typeCode.codeValue=Department]`), at [0], and at [-1] (the latest of a history, such as terminations).
 */
function walk(value: unknown, steps: PathStep[], depth: number, leaf: (steps: PathStep[], value: unknown) => void): void {
  if (depth > 8) return;
  if (value === null || typeof value !== 'object') {
    if (steps.length > 0) leaf(steps, value);
    return;
  }
  if (!Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) walk(v, [...steps, { kind: 'key', key: k }], depth + 1, leaf);
    return;
  }
  const elements = value.slice(0, ELEMENTS_LOOKED_AT);
  const objects = elements.filter((e): e is Record<string, unknown> => e !== null && typeof e === 'object' && !Array.isArray(e));
  if (objects.length === 0) {
    if (elements.length > 0) walk(elements[0], [...steps, { kind: 'index', index: 0 }], depth + 1, leaf);
    return;
  }
  // The primary element first: among equally good keys, the one met first is proposed.
  for (const key of PRIMARY_KEYS) {
    const primary = objects.find((o) => o[key] === true);
    if (primary) {
      walk(primary, [...steps, filterStep(key, 'true')], depth + 1, leaf);
      break;
    }
  }
  for (const o of objects) {
    const q = qualifierOf(o);
    if (q) walk(o, [...steps, { kind: 'filter', where: [q], last: false }], depth + 1, leaf);
  }
  walk(objects[0], [...steps, { kind: 'index', index: 0 }], depth + 1, leaf);
  const all = value.filter((e) => e !== null && typeof e === 'object' && !Array.isArray(e));
  walk(all[all.length - 1], [...steps, { kind: 'index', index: -1 }], depth + 1, leaf);
}
