/**
 * Search entries decoded without ldapts' per-attribute objects. ldapts' `Attribute` keeps every value twice (a Buffer
 * and its string, each in an array grown for 17 elements) and decodes through a TextDecoder: about 4.5 KB of garbage
 * per entry, two thirds of what a read allocates, and the young-generation collections that go with it. Installed on
 * one client's message parser (`leanEntries`), only for search entries: the same BER reader of ldapts reads the same
 * fields, every other message is ldapts' own.
 *
 * Values are what ldapts gives: strings (decoded straight from the message, no Buffer view per value), or, for a
 * `;binary` type, objectGUID, or a value that is not UTF-8, every value of that attribute as a Buffer (then also in
 * `parsedBuffers`, which text attributes leave empty: the entry reader reads it only for Buffers).
 */
import { isUtf8 } from 'node:buffer';
import { Ber, ProtocolOperation, SearchEntry, type Attribute, type BerReader, type Client, type Control } from 'ldapts';

/** An attribute of a lean entry: the fields of ldapts' Attribute that the entry reader uses. */
interface LeanAttribute {
  type: string;
  values: string[] | Buffer[];
  parsedBuffers: Buffer[];
}

const SET = 0x31; // BER SET OF (the values of a PartialAttribute)
const EMPTY = Buffer.alloc(0);
const NONE: Buffer[] = [];
const NO_TEXT: string[] = [];
/** Text attributes keep no Buffers: the entry reader asks for them only for binary types or values that are not UTF-8. */
const NO_BUFFERS_KEPT: Buffer[] = [];

/**
 * The next OCTET STRING as UTF-8 text without a Buffer view of it (ldapts' readString makes one per value), or
 * undefined, with the reader not moved, when it is not UTF-8. Decoding replaces bad bytes with U+FFFD, so only a
 * text holding U+FFFD is checked strictly.
 */
function readText(reader: BerReader): string | undefined {
  if (reader.peek() !== Ber.OctetString) return (reader.readString(Ber.OctetString) as string | null) ?? undefined; // ldapts' error
  const at = reader.offset;
  const start = reader.readLength(at + 1);
  if (start === null || reader.length > reader.remain - (start - at)) return undefined;
  const end = start + reader.length;
  const buf = reader.buffer;
  let out: string | undefined;
  if (end - start >= 3 && buf[start] === 0xef && buf[start + 1] === 0xbb && buf[start + 2] === 0xbf) {
    // A leading byte-order mark: ldapts' TextDecoder drops it (and refuses bytes that are not UTF-8).
    try {
      out = bomDecoder.decode(buf.subarray(start, end));
    } catch {
      out = undefined;
    }
  } else {
    out = buf.toString('utf8', start, end);
    if (out.includes('\ufffd') && !isUtf8(buf.subarray(start, end))) out = undefined;
  }
  if (out !== undefined) reader.offset = end;
  return out;
}

/** ldapts' `readString()` (UTF-8, bad bytes replaced) without its Buffer view: for the DN and attribute types. */
function readString(reader: BerReader): string | null {
  if (reader.peek() !== Ber.OctetString) return reader.readString();
  const at = reader.offset;
  const start = reader.readLength(at + 1);
  if (start === null || reader.length > reader.remain - (start - at)) return null;
  const end = start + reader.length;
  reader.offset = end;
  return reader.buffer.toString('utf8', start, end);
}

const value = (reader: BerReader): Buffer => (reader.readString(Ber.OctetString, true) as Buffer | null) ?? EMPTY;
const bomDecoder = new TextDecoder('utf8', { fatal: true });

/** A SearchResultEntry (RFC 4511 4.5.2: objectName, then a sequence of (type, SET OF value)) read into lean attributes. */
class LeanSearchEntry extends SearchEntry {
  override parseMessage(reader: BerReader): void {
    this.name = readString(reader) ?? '';
    reader.readSequence();
    const end = reader.offset + reader.length;
    const attributes: LeanAttribute[] = [];
    while (reader.offset < end) {
      reader.readSequence();
      const type = readString(reader) ?? '';
      if (isBinary(type)) {
        let buffers: Buffer[] = NONE;
        if (reader.peek() === SET && reader.readSequence(SET)) {
          const valuesEnd = reader.offset + reader.length;
          if (reader.offset < valuesEnd) buffers = [value(reader)];
          while (reader.offset < valuesEnd) buffers.push(value(reader));
        }
        attributes.push({ type, values: buffers, parsedBuffers: buffers });
        continue;
      }
      let values: string[] = NO_TEXT;
      let start = reader.offset;
      let notText = false;
      if (reader.peek() === SET && reader.readSequence(SET)) {
        const valuesEnd = reader.offset + reader.length;
        start = reader.offset;
        // Most attributes have one value: an array of exactly one, not one grown for more.
        if (reader.offset < valuesEnd) {
          const v = readText(reader);
          if (v === undefined) notText = true;
          else values = [v];
        }
        while (!notText && reader.offset < valuesEnd) {
          const v = readText(reader);
          if (v === undefined) notText = true;
          else values.push(v);
        }
        if (notText) {
          // A value that is not UTF-8: every value of the attribute as a Buffer, as ldapts gives them.
          reader.offset = start;
          const buffers: Buffer[] = [];
          while (reader.offset < valuesEnd) buffers.push(value(reader));
          attributes.push({ type, values: buffers, parsedBuffers: buffers });
          continue;
        }
      }
      attributes.push({ type, values, parsedBuffers: NO_BUFFERS_KEPT });
    }
    this.attributes = attributes as unknown as Attribute[];
  }
}

/** ldapts' rule (a `;binary` option) plus objectGUID, which the connector always reads as bytes. */
function isBinary(type: string): boolean {
  const n = type.length;
  if (n === 10) return type.toLowerCase() === 'objectguid';
  return n > 7 && type.charCodeAt(n - 7) === 59 && type.slice(n - 6).toLowerCase() === 'binary';
}

type MessageFactory = (messageId: number, operation: number, reader: BerReader, request?: { controls?: Control[] }) => unknown;

/**
 * Makes `client` decode search entries as lean entries. A client whose parser is not as expected (another ldapts
 * version) is left as it is: ldapts' own entries are read the same way (see paged-search.ts, EntryReader).
 */
export function leanEntries(client: Client): void {
  const parser = (client as unknown as { messageParser?: { _getMessageFromProtocolOperation?: MessageFactory } }).messageParser;
  const own = parser?._getMessageFromProtocolOperation;
  if (!parser || typeof own !== 'function') return;
  parser._getMessageFromProtocolOperation = function (this: unknown, messageId, operation, reader, request) {
    if (operation !== ProtocolOperation.LDAP_RES_SEARCH_ENTRY) return own.call(this, messageId, operation, reader, request);
    const entry = new LeanSearchEntry({ messageId });
    entry.parse(reader, request?.controls ?? []);
    return entry;
  };
}
