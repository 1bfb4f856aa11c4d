/**
 * JSON text in chunks (issue 31): a saved plan of a million changes is more text than V8's largest string (about
 * 512 MB), so it is written, signed and stored piece by piece. The pieces joined are, byte for byte, what
 * `JSON.stringify(value, null, 2)` (pretty), `JSON.stringify(value)` (compact) or the canonical JSON (keys sorted at every level, compact) of the same
 * value would be. Objects are walked; every element of an array is stringified on its own, so no piece is longer
 * than the largest array element (one change of a plan), whatever the length of the array.
 */

/** How the text is laid out: `pretty` as JSON.stringify(v, null, 2), `compact` as JSON.stringify(v), `canonical` compact with keys sorted. */
export type JsonLayout = 'pretty' | 'compact' | 'canonical';

/** The chunk size the writers aim at (a chunk is joined pieces, at least one). */
export const JSON_CHUNK_SIZE = 65_536;

/** JSON with object keys sorted at every level (arrays keep their order). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = (v as Record<string, unknown>)[k];
    return out;
  });
}

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
const omitted = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/** A value JSON.stringify walks into (not a leaf): an array, or a plain object without toJSON. */
const walked = (v: unknown): v is object => v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON !== 'function';

/** One value as a single string, in the layout, at nesting `indent` (pretty only). */
function whole(value: unknown, layout: JsonLayout, indent: string): string {
  if (layout === 'canonical') return canonicalJson(value) ?? 'null';
  if (layout === 'compact') return JSON.stringify(value) ?? 'null';
  const text = JSON.stringify(value, null, 2) ?? 'null';
  return indent === '' ? text : text.replace(/\n/g, `\n${indent}`);
}

/** The keys of an object in the order the layout writes them (canonical: as canonicalJson's sorted copy enumerates them). */
function keysOf(obj: Record<string, unknown>, layout: JsonLayout): string[] {
  if (layout !== 'canonical') return Object.keys(obj);
  // Integer-like keys enumerate first in any object: sorted into a new object, as canonicalJson does, then listed.
  const sorted: Record<string, unknown> = {};
  for (const k of Object.keys(obj).sort()) sorted[k] = obj[k];
  return Object.keys(sorted);
}

/** The pieces of an array: each element whole. */
function* arrayPieces(list: readonly unknown[], layout: JsonLayout, indent: string): Generator<string> {
  if (list.length === 0) {
    yield '[]';
    return;
  }
  const inner = `${indent}  `;
  const open = layout === 'pretty' ? `[\n${inner}` : '[';
  const sep = layout === 'pretty' ? `,\n${inner}` : ',';
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    yield `${i === 0 ? open : sep}${omitted(v) ? 'null' : whole(v, layout, inner)}`;
  }
  yield layout === 'pretty' ? `\n${indent}]` : ']';
}

/** The pieces of an object: its keys walked in order, arrays split into elements. */
function* objectPieces(obj: Record<string, unknown>, layout: JsonLayout, indent: string): Generator<string> {
  const inner = `${indent}  `;
  let first = true;
  for (const k of keysOf(obj, layout)) {
    const v = obj[k];
    if (omitted(v)) continue;
    const lead = layout === 'pretty' ? `${first ? '{' : ','}\n${inner}${JSON.stringify(k)}: ` : `${first ? '{' : ','}${JSON.stringify(k)}:`;
    first = false;
    if (walked(v)) {
      yield lead;
      yield* valuePieces(v, layout, inner);
    } else yield `${lead}${JSON.stringify(v)}`;
  }
  yield first ? '{}' : layout === 'pretty' ? `\n${indent}}` : '}';
}

/** The pieces of any value (a leaf is one piece). */
function* valuePieces(value: unknown, layout: JsonLayout, indent: string): Generator<string> {
  if (Array.isArray(value)) yield* arrayPieces(value, layout, indent);
  else if (walked(value)) yield* objectPieces(value as Record<string, unknown>, layout, indent);
  else yield whole(value, layout, indent);
}

/**
 * The JSON text of `value` in chunks of about `chunkSize` characters (whole pieces joined: a chunk never splits a
 * string, a number or a surrogate pair). Joined, they equal `JSON.stringify(value, null, 2)` (pretty),
 * `JSON.stringify(value)` (compact) or `canonicalJson(value)` (canonical).
 */
export function* jsonChunks(value: unknown, layout: JsonLayout, chunkSize = JSON_CHUNK_SIZE): Generator<string> {
  yield* joinedChunks(valuePieces(value, layout, ''), chunkSize);
}

/**
 * `pieces` joined into chunks of about `chunkSize` characters (whole pieces: a chunk never splits one). Joined per
 * chunk: one flat string for each write or hash update, not a rope of thousands of pieces.
 */
export function* joinedChunks(pieces: Iterable<string>, chunkSize: number): Generator<string> {
  let parts: string[] = [];
  let size = 0;
  for (const piece of pieces) {
    parts.push(piece);
    size += piece.length;
    if (size >= chunkSize) {
      yield parts.join('');
      parts = [];
      size = 0;
    }
  }
  if (parts.length > 0) yield parts.join('');
}
