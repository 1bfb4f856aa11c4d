/**
 * Reading JSON in chunks (issue 31): a saved plan of a million changes is longer than a string can be, so it cannot go
 * through one JSON.parse. This reader walks the objects itself and hands every element of an array to JSON.parse on
 * its own: the largest string it builds is one array element (one change of a plan), whatever the file's size. The
 * value it returns is what JSON.parse of the whole text would return (no package in the dependencies parses JSON
 * incrementally, and the documents read here are objects of arrays of small values).
 */

/** What the reader was given that is not JSON (the message says where: a byte offset from the start). */
export class JsonStreamError extends Error {}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

type Frame =
  | { kind: 'object'; value: Record<string, unknown>; key: string; expect: 'first-key' | 'key' | 'colon' | 'value' | 'next' }
  | { kind: 'array'; value: unknown[]; expect: 'first' | 'value' | 'next'; streamed?: StreamedArray };

/** A value being captured for JSON.parse: a whole array element, or a scalar (or a property name) in an object. */
interface Capture {
  parts: Buffer[];
  size: number;
  /** Offset of its first byte. */
  start: number;
  /** Containers open inside it (a container capture ends when this is 0 again). */
  depth: number;
  inString: boolean;
  escaped: boolean;
  /** A string, a number or a literal (true, false, null), not a container. */
  scalar: boolean;
}

/**
 * An array whose elements are handed over one by one instead of kept (a saved plan's million changes): the array at
 * `path`, the object keys leading to it from the top-level object (`['plan', 'changes']`).
 */
export interface StreamedArray {
  path: readonly string[];
  /** Called when the array opens, with the objects leading to it (outermost first) as read so far: later keys not yet. */
  open?(objects: readonly Record<string, unknown>[]): void;
  /** Each element, in order, as JSON.parse returns it; the array in the returned value stays empty. */
  each(value: unknown, index: number): void;
}

/** Where to stop: after the top-level key `stopAtKey` is read (its value and what follows are not read); what to stream. */
export interface JsonReadOptions {
  stopAtKey?: string;
  stream?: StreamedArray;
}

/** Sets a property as JSON.parse does (an own `__proto__` property too). */
function put(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/** Bytes a JSON value can start with, besides { and [. */
const startsScalar = (b: number): boolean => b === QUOTE || b === 0x2d || (b >= 0x30 && b <= 0x39) || b === 0x74 || b === 0x66 || b === 0x6e;

/** The incremental parser: `push` chunks in order, then `end`. */
class JsonStreamParser {
  private readonly stack: Frame[] = [];
  private root: unknown;
  private done = false;
  private capture: Capture | undefined;
  /** Offset of the current chunk's first byte. */
  private offset = 0;
  /** Set when the top-level key named in the options was read. */
  stopped = false;
  /** Elements of the streamed array handed over so far. */
  private streamedCount = 0;

  constructor(private readonly options: JsonReadOptions) {}

  private fail(what: string, at: number): never {
    throw new JsonStreamError(`${what} at byte ${at}`);
  }

  /** Hands a finished value to the frame it belongs to (or makes it the root). */
  private deliver(value: unknown, at: number): void {
    const top = this.stack.at(-1);
    if (!top) {
      this.root = value;
      this.done = true;
    } else if (top.kind === 'array') {
      if (top.streamed) top.streamed.each(value, this.streamedCount++);
      else top.value.push(value);
      top.expect = 'next';
    } else if (top.expect === 'value') {
      put(top.value, top.key, value);
      top.expect = 'next';
    } else {
      if (typeof value !== 'string') this.fail('expected a property name in double quotes', at);
      top.key = value;
      top.expect = 'colon';
      if (this.stack.length === 1 && value === this.options.stopAtKey) this.stopped = true;
    }
  }

  private finishCapture(): void {
    const c = this.capture!;
    this.capture = undefined;
    const text = (c.parts.length === 1 ? c.parts[0]! : Buffer.concat(c.parts, c.size)).toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new JsonStreamError(`${(err as Error).message} (in the value starting at byte ${c.start})`);
    }
    this.deliver(value, c.start);
  }

  /** Continues the capture over `buf` from `i`; returns the index after it (buf.length: it goes on in the next chunk). */
  private continueCapture(buf: Buffer, i: number): number {
    const c = this.capture!;
    let j = i;
    let ended = false;
    for (; j < buf.length && !ended; j++) {
      const b = buf[j]!;
      if (c.inString) {
        if (c.escaped) c.escaped = false;
        else if (b === BACKSLASH) c.escaped = true;
        else if (b === QUOTE) {
          c.inString = false;
          ended = c.scalar;
        }
      } else if (b === QUOTE) c.inString = true;
      else if (c.scalar) {
        // A number or literal ends before the byte that follows it (not part of it).
        if (isSpace(b) || b === 0x2c || b === 0x5d || b === 0x7d) {
          ended = true;
          j--;
        }
      } else if (b === 0x7b || b === 0x5b) c.depth++;
      else if (b === 0x7d || b === 0x5d) ended = --c.depth === 0;
    }
    c.parts.push(buf.subarray(i, j));
    c.size += j - i;
    if (ended) this.finishCapture();
    return j;
  }

  /** Begins a value (or a property name) at `buf[i]`: an object or array walked, or a capture. */
  private begin(buf: Buffer, i: number): number {
    const b = buf[i]!;
    const top = this.stack.at(-1);
    const container = b === 0x7b || b === 0x5b;
    // Objects and arrays are walked, except array elements: those are parsed whole, one at a time.
    if (top?.kind !== 'array' && container && !(top?.kind === 'object' && top.expect !== 'value')) {
      if (b === 0x7b) this.stack.push({ kind: 'object', value: {}, key: '', expect: 'first-key' });
      else this.stack.push(this.streamsHere() ? { kind: 'array', value: [], expect: 'first', streamed: this.openStreamed() } : { kind: 'array', value: [], expect: 'first' });
      return i + 1;
    }
    if (!container && !startsScalar(b)) this.fail(`unexpected character ${JSON.stringify(String.fromCharCode(b))}`, this.offset + i);
    if (top?.kind === 'object' && top.expect !== 'value' && b !== QUOTE) this.fail('expected a property name in double quotes', this.offset + i);
    this.capture = { parts: [buf.subarray(i, i + 1)], size: 1, start: this.offset + i, depth: container ? 1 : 0, inString: b === QUOTE, escaped: false, scalar: !container };
    return this.continueCapture(buf, i + 1);
  }

  /** True when an array opening now is the one the options stream (every frame an object, at the path's keys). */
  private streamsHere(): boolean {
    const path = this.options.stream?.path;
    if (!path || path.length !== this.stack.length) return false;
    return this.stack.every((f, k) => f.kind === 'object' && f.key === path[k]);
  }

  private openStreamed(): StreamedArray {
    const stream = this.options.stream!;
    stream.open?.(this.stack.map((f) => f.value as Record<string, unknown>));
    return stream;
  }

  /** Closes the innermost container at `buf[i]`. */
  private close(i: number): number {
    const frame = this.stack.pop()!;
    this.deliver(frame.value, this.offset + i);
    return i + 1;
  }

  /** The structural step at `buf[i]` (outside a capture); returns the next index. */
  private step(buf: Buffer, i: number): number {
    const b = buf[i]!;
    if (isSpace(b)) return i + 1;
    if (this.done) this.fail('unexpected text after the JSON value', this.offset + i);
    const top = this.stack.at(-1);
    if (!top) return this.begin(buf, i);
    const closing = top.kind === 'object' ? 0x7d : 0x5d;
    if (top.expect === 'next') {
      if (b === closing) return this.close(i);
      if (b !== 0x2c) this.fail(`expected ',' or '${String.fromCharCode(closing)}'`, this.offset + i);
      top.expect = top.kind === 'object' ? 'key' : 'value';
      return i + 1;
    }
    if ((top.expect === 'first-key' || top.expect === 'first') && b === closing) return this.close(i);
    if (top.kind === 'object' && top.expect === 'colon') {
      if (b !== 0x3a) this.fail(`expected ':' after the property name ${JSON.stringify(top.key)}`, this.offset + i);
      top.expect = 'value';
      return i + 1;
    }
    return this.begin(buf, i);
  }

  /** Reads one more chunk. */
  push(buf: Buffer): void {
    let i = 0;
    while (i < buf.length && !this.stopped) i = this.capture ? this.continueCapture(buf, i) : this.step(buf, i);
    this.offset += buf.length;
  }

  /** The value, once every chunk was pushed (or the top-level object read so far, when stopped). */
  end(): unknown {
    if (this.stopped) return this.stack[0]!.value;
    // A number or literal at the very end of the text has nothing after it to end it.
    if (this.capture?.scalar && !this.capture.inString) this.finishCapture();
    if (this.capture || this.stack.length > 0 || !this.done) this.fail('unexpected end of the JSON text', this.offset);
    return this.root;
  }
}

/**
 * Parses JSON given in chunks (Buffers of UTF-8, or strings), as JSON.parse of their concatenation would; throws a
 * JsonStreamError naming the byte offset of what is wrong. With `stopAtKey`, reading stops when the top-level object's
 * key of that name is reached, and the object read so far is returned (the rest is not read).
 */
export function parseJsonChunks(chunks: Iterable<Uint8Array | string>, options: JsonReadOptions = {}): unknown {
  const parser = new JsonStreamParser(options);
  for (const chunk of chunks) {
    parser.push(bytesOf(chunk));
    if (parser.stopped) break;
  }
  return parser.end();
}

const bytesOf = (chunk: Uint8Array | string): Buffer => (typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));

/**
 * The elements of the array at `path` (object keys from the top-level object) of JSON given in chunks, pulled one by
 * one: a chunk's elements are parsed when the next is asked for. Throws a JsonStreamError as parseJsonChunks, once
 * the text is wrong (the elements before were yielded). The rest of the document is read and dropped.
 */
export function* jsonArrayElements(chunks: Iterable<Uint8Array | string>, path: readonly string[]): Generator<unknown> {
  let pending: unknown[] = [];
  const parser = new JsonStreamParser({ stream: { path, each: (value) => pending.push(value) } });
  for (const chunk of chunks) {
    parser.push(bytesOf(chunk));
    const ready = pending;
    pending = [];
    yield* ready;
  }
  parser.end();
}
