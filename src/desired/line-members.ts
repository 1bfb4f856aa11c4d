/**
 * The members read by line from one file (addMemberAt), compact (issue 31). A record keeps one hidden slot, its number
 * among the file's members; its source id, name, e-mail and phone are four entries of the file's PackedStrings and
 * its line an entry of a typed array. Own enumerable accessors read them, in the keys' usual order (source_id,
 * display_name, origin, email, phone, then title and department_source_id as data, and status from one accessor per
 * value), so JSON, spreads, digests and comparisons see the plain record they always did; assigning one makes it a
 * plain data property again, in the same place among the keys. About 48 bytes a member and its strings' characters,
 * where a record with its own four strings held about 230.
 */
import type { DesiredMember, DesiredMemberStatus, RecordOrigin } from '../domain/desired.js';
import { keepInSlot } from '../shared/hidden-slot.js';
import { PackedStrings } from './packed-strings.js';

/** A member before the merge: mapping.ts's SourceMember (which imports this module). */
type SourceMember = Omit<DesiredMember, 'status'> & { status?: DesiredMemberStatus };

/** Where a record keeps its number: a hidden slot, so JSON, spreads and Object.keys never see it. */
const AT = Symbol('at');

/** The entries a member takes in the strings, in this order. */
const SOURCE_ID = 0;
const DISPLAY_NAME = 1;
const EMAIL = 2;
const PHONE = 3;
const PER_MEMBER = 4;

type Numbered = { [AT]: number };

/** The accessors of one file's records: shared by all of them, so they share their maps. */
type Fields = { [K in 'source_id' | 'display_name' | 'origin' | 'email' | 'phone']: PropertyDescriptor };

/** An own accessor over a record's entry; assigning the key replaces it by a data property where it stands. */
function accessor<T>(key: string, get: (this: Numbered) => T): PropertyDescriptor {
  return {
    get,
    set(this: object, value: T) {
      Object.defineProperty(this, key, { value, writable: true, enumerable: true, configurable: true });
    },
    enumerable: true,
    configurable: true,
  };
}

/** A status read from the record's map, not a slot: one accessor per value, shared by every record of it. */
function statusValue(value: DesiredMemberStatus): PropertyDescriptor {
  return accessor('status', () => value);
}
const STATUSES: { [S in DesiredMemberStatus]: PropertyDescriptor } = { active: statusValue('active'), suspended: statusValue('suspended'), left: statusValue('left') };

export class LineMembers {
  private readonly strings = new PackedStrings();
  private lines = new Int32Array(256);
  private count = 0;
  private readonly fields: Fields;

  /** The members of the file `source` reads whose locations start with `at` (`members.csv:`). */
  constructor(source: string, at: string) {
    const strings = this.strings;
    const entry = (k: number) =>
      function (this: Numbered): string {
        return strings.get(this[AT] * PER_MEMBER + k);
      };
    // Read through this: the array is replaced when it grows.
    const lines = () => this.lines;
    this.fields = {
      source_id: accessor('source_id', entry(SOURCE_ID)),
      display_name: accessor('display_name', entry(DISPLAY_NAME)),
      origin: accessor('origin', function (this: Numbered): RecordOrigin {
        return { source, location: at + lines()[this[AT]]! };
      }),
      email: accessor('email', entry(EMAIL)),
      phone: accessor('phone', entry(PHONE)),
    };
  }

  /** The record of the member found at `line`. */
  add(line: number, source_id: string, display_name: string, email: string | undefined, phone: string | undefined, title: string | undefined, dept: string | undefined, status: DesiredMemberStatus | undefined): SourceMember {
    const n = this.count++;
    if (n === this.lines.length) {
      const grown = new Int32Array(this.lines.length * 2);
      grown.set(this.lines);
      this.lines = grown;
    }
    this.lines[n] = line;
    const s = this.strings;
    s.add(source_id);
    s.add(display_name);
    s.add(email ?? '');
    s.add(phone ?? '');
    return new PackedMember(this.fields, n, email !== undefined, phone !== undefined, title, dept, status);
  }
}

/**
 * Builds a record (a constructor: V8 sizes the object to its slots at once). Its prototype is Object.prototype, so
 * it is a plain object to every reader (`constructor === Object`).
 */
const PackedMember = function (this: SourceMember & Numbered, f: Fields, n: number, email: boolean, phone: boolean, title: string | undefined, dept: string | undefined, status: DesiredMemberStatus | undefined) {
  Object.defineProperty(this, 'source_id', f.source_id);
  Object.defineProperty(this, 'display_name', f.display_name);
  Object.defineProperty(this, 'origin', f.origin);
  if (email) Object.defineProperty(this, 'email', f.email);
  if (phone) Object.defineProperty(this, 'phone', f.phone);
  if (title !== undefined) this.title = title;
  if (dept !== undefined) this.department_source_id = dept;
  if (status !== undefined) Object.defineProperty(this, 'status', STATUSES[status]);
  keepInSlot(this, AT, n);
} as unknown as new (f: Fields, n: number, email: boolean, phone: boolean, title: string | undefined, dept: string | undefined, status: DesiredMemberStatus | undefined) => SourceMember;
PackedMember.prototype = Object.prototype;
