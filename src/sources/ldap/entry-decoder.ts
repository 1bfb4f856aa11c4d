/**
 * Search entries decoded without ldapts' per-attribute objects. ldapts' `Attribute` keeps every value twice (a Buffer
 * and its string, each in an array grown for 17 elements) and decodes through a TextDecoder: about 4.5 KB of garbage
 * per entry, two thirds of what a read allocates, and the young-generation collections that go with it. Installed on
 * one client's message parser (`leanEntries`), only for search entries: the same BER reader of ldapts reads the same
 * fields, every other message is ldapts' own.
 *
 * Values are what ldapts gives: strings, or, for a `;binary` type, objectGUID, or a value that is not UTF-8, every
 * value of that attribute as a Buffer (`parsedBuffers` holds the Buffers in every case, as on ldapts' Attribute).
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

const value = (reader: BerReader): Buffer => (reader.readString(Ber.OctetString, true) as Buffer | null) ?? EMPTY;
const bomDecoder = new TextDecoder('utf8', { fatal: true });

/** A SearchResultEntry (RFC 4511 4.5.2: objectName, then a sequence of (type, SET OF value)) read into lean attributes. */
class LeanSearchEntry extends SearchEntry {
  override parseMessage(reader: BerReader): void {
    this.name = reader.readString() ?? '';
    reader.readSequence();
    const end = reader.offset + reader.length;
    const attributes: LeanAttribute[] = [];
    while (reader.offset < end) {
      reader.readSequence();
      const type = reader.readString() ?? '';
      let buffers: Buffer[] = NONE;
      if (reader.peek() === SET && reader.readSequence(SET)) {
        const valuesEnd = reader.offset + reader.length;
        // Most attributes have one value: an array of exactly one, not one grown for more.
        if (reader.offset < valuesEnd) buffers = [value(reader)];
        while (reader.offset < valuesEnd) buffers.push(value(reader));
      }
      attributes.push({ type, values: isBinary(type) ? buffers : texts(buffers), parsedBuffers: buffers });
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

/** The values as strings, or the Buffers themselves when one is not UTF-8 (as ldapts' fatal TextDecoder decides). */
function texts(buffers: Buffer[]): string[] | Buffer[] {
  if (buffers.length === 1) {
    const b = buffers[0]!;
    return isUtf8(b) ? [text(b)] : buffers;
  }
  const out: string[] = [];
  for (const b of buffers) {
    if (!isUtf8(b)) return buffers;
    out.push(text(b));
  }
  return out;
}

/** A UTF-8 value as TextDecoder reads it: a leading byte-order mark is dropped (Buffer#toString keeps it). */
const text = (b: Buffer): string => (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? bomDecoder.decode(b) : b.toString('utf8'));

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
