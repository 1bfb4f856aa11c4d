/**
 * Duplicate detection over hundreds of thousands of strings (source ids, e-mails, phones). A JS Set of 300,000
 * fresh strings costs about 0.5 µs per add on the 2-core machine (growth rehashes, a hash computed per string, a
 * cache miss per probe); this open-addressing table costs a third of that. The
 * strings themselves stay where they are (the records hold them): the table keeps indexes into a list of the keys.
 */

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

/** FNV-1a over the UTF-16 code units of `s`, mixed so the low bits spread. */
function hashOf(s: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h ^ (h >>> 16);
}

/**
 * The open-addressing table under SeenKeys and SeenRecordKeys: slot -> 1 + the key's index (0: empty). `keyAt(i)` is
 * the key stored under index i. Only the index is kept (issue 31): a probe compares the key itself, which V8 does by
 * pointer, cached hash and length before any character, so storing each key's hash beside it saved little time and
 * doubled the table (at a million members three tables of 16 MB, held until the next full collection).
 */
abstract class KeyTable {
  private table: Int32Array;
  private mask: number;
  private count = 0;

  constructor(expected: number) {
    let cap = 16;
    while (cap < expected * 2) cap *= 2;
    this.table = new Int32Array(cap);
    this.mask = cap - 1;
  }

  protected abstract keyAt(index: number): string | undefined;

  /** Looks `key` up; when absent, stores it under `index`. True when it was there already (nothing stored then). */
  protected seen(key: string, index: number): boolean {
    // Grown before the key goes in, never after: growing reads every stored key back, and the caller may list the new
    // one only once this returns.
    if ((this.count + 1) * 2 > this.table.length) this.grow();
    const { table, mask } = this;
    let p = hashOf(key) & mask;
    for (;;) {
      const at = table[p]!;
      if (at === 0) break;
      if (this.keyAt(at - 1) === key) return true;
      p = (p + 1) & mask;
    }
    table[p] = index + 1;
    this.count++;
    return false;
  }

  private grow(): void {
    const old = this.table;
    const table = new Int32Array(old.length * 2);
    const mask = table.length - 1;
    for (let i = 0; i < old.length; i++) {
      const at = old[i]!;
      if (at === 0) continue;
      let p = hashOf(this.keyAt(at - 1)!) & mask;
      while (table[p] !== 0) p = (p + 1) & mask;
      table[p] = at;
    }
    this.table = table;
    this.mask = mask;
  }
}

/** A set of strings that answers "seen before?" on add. `expected` sizes it (it grows past that). */
export class SeenKeys extends KeyTable {
  private readonly keys: string[] = [];

  protected keyAt(index: number): string {
    return this.keys[index]!;
  }

  /** Adds `key`; true when it was added before (the table is unchanged then). */
  add(key: string): boolean {
    if (this.seen(key, this.keys.length)) return true;
    this.keys.push(key);
    return false;
  }
}

/**
 * SeenKeys over a field of records a list holds already (issue 31): the table keeps each key's record index and reads
 * the key back from the record, so a million ids, e-mails or phones are not listed a second time.
 */
export class SeenRecordKeys<T> extends KeyTable {
  constructor(
    expected: number,
    private readonly records: readonly T[],
    private readonly keyOf: (record: T) => string | undefined,
  ) {
    super(expected);
  }

  protected keyAt(index: number): string | undefined {
    return this.keyOf(this.records[index]!);
  }

  /** Adds `key`, the key of records[index]; true when another record had it before (the table is unchanged then). */
  add(key: string, index: number): boolean {
    return this.seen(key, index);
  }
}
