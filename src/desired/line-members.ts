/**
 * The members read by line from one file (addMemberAt), compact (issue 31). A record keeps one hidden slot, its number
 * among the file's members; its source id, name, e-mail and phone are four entries of the file's PackedStrings and
 * its line and its status entries of typed arrays. Own enumerable accessors read them, in the keys' usual order
 * (source_id, display_name, origin, email, phone, then title and department_source_id as data, then status), so JSON,
 * spreads, digests and comparisons see the plain record they always did; assigning one makes it a plain data property
 * again, in the same place among the keys. About 48 bytes a member and its strings' characters, where a record with
 * its own four strings held about 230.
 *
 * V8 shares one map among objects that define a key with the same accessor pair, and turns an object into a
 * dictionary (about 430 bytes more) when it defines a key with another pair than its siblings from the same
 * constructor did. So every record of a file defines each key with the file's one pair (status reads a byte per
 * member, not one accessor per value), and each file builds its records with a constructor of its own (a second file,
 * or the daemon's next run, brings new pairs). Before, every member not of the first status seen (10% of the
 * benchmark's) and every member of a second file was a dictionary.
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
type Fields = { [K in 'source_id' | 'display_name' | 'origin' | 'email' | 'phone' | 'status']: PropertyDescriptor };

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

/** The statuses by the byte a file keeps for each member (0: none given, so no key). */
const STATUS_BY_CODE: readonly (DesiredMemberStatus | undefined)[] = [undefined, 'active', 'suspended', 'left'];
const STATUS_CODE: { [S in DesiredMemberStatus]: number } = { active: 1, suspended: 2, left: 3 };

export class LineMembers {
  private readonly strings = new PackedStrings();
  private lines = new Int32Array(256);
  private statuses = new Uint8Array(256);
  private count = 0;
  private readonly fields: Fields;
  private readonly Member = packedMemberConstructor();

  /** The members of the file `source` reads whose locations start with `at` (`members.csv:`). */
  constructor(source: string, at: string) {
    const strings = this.strings;
    const entry = (k: number) =>
      function (this: Numbered): string {
        return strings.get(this[AT] * PER_MEMBER + k);
      };
    // Read through these: the arrays are replaced when they grow.
    const lines = () => this.lines;
    const statuses = () => this.statuses;
    this.fields = {
      source_id: accessor('source_id', entry(SOURCE_ID)),
      display_name: accessor('display_name', entry(DISPLAY_NAME)),
      origin: accessor('origin', function (this: Numbered): RecordOrigin {
        return { source, location: at + lines()[this[AT]]! };
      }),
      email: accessor('email', entry(EMAIL)),
      phone: accessor('phone', entry(PHONE)),
      status: accessor('status', function (this: Numbered): DesiredMemberStatus {
        return STATUS_BY_CODE[statuses()[this[AT]]!]!;
      }),
    };
  }

  /** The record of the member found at `line`. */
  add(line: number, source_id: string, display_name: string, email: string | undefined, phone: string | undefined, title: string | undefined, dept: string | undefined, status: DesiredMemberStatus | undefined): SourceMember {
    const n = this.count++;
    if (n === this.lines.length) {
      const lines = new Int32Array(n * 2);
      lines.set(this.lines);
      this.lines = lines;
      const statuses = new Uint8Array(n * 2);
      statuses.set(this.statuses);
      this.statuses = statuses;
    }
    this.lines[n] = line;
    if (status !== undefined) this.statuses[n] = STATUS_CODE[status];
    const s = this.strings;
    s.add(source_id);
    s.add(display_name);
    s.add(email ?? '');
    s.add(phone ?? '');
    return new this.Member(this.fields, n, email !== undefined, phone !== undefined, title, dept, status !== undefined);
  }
}

type PackedMember = new (f: Fields, n: number, email: boolean, phone: boolean, title: string | undefined, dept: string | undefined, status: boolean) => SourceMember;

/**
 * A constructor of records (V8 sizes an object to its slots at once), a new function each time: V8 keeps the maps of
 * the objects a function builds under that function, so one file's accessor pairs never meet another's. Its
 * prototype is Object.prototype, so a record is a plain object to every reader (`constructor === Object`).
 */
function packedMemberConstructor(): PackedMember {
  const PackedMember = function (this: SourceMember & Numbered, f: Fields, n: number, email: boolean, phone: boolean, title: string | undefined, dept: string | undefined, status: boolean) {
    Object.defineProperty(this, 'source_id', f.source_id);
    Object.defineProperty(this, 'display_name', f.display_name);
    Object.defineProperty(this, 'origin', f.origin);
    if (email) Object.defineProperty(this, 'email', f.email);
    if (phone) Object.defineProperty(this, 'phone', f.phone);
    if (title !== undefined) this.title = title;
    if (dept !== undefined) this.department_source_id = dept;
    if (status) Object.defineProperty(this, 'status', f.status);
    keepInSlot(this, AT, n);
  } as unknown as PackedMember;
  PackedMember.prototype = Object.prototype;
  return PackedMember;
}
