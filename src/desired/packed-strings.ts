/**
 * Strings kept end to end (issue 31): every 1,024 of them joined into one string, each found again by where it ends
 * in its block. A V8 string costs 16 bytes of header and rounds its characters up to 8; an e-mail of 33 characters
 * takes 56 bytes on its own and 35 here (its characters and a 2-byte end, 4 when its block is over 65,535
 * characters). Reading one slices it out of its block: a short-lived string the reader drops, where the record kept
 * one for its whole life.
 */
const SHIFT = 10;
const BLOCK = 1 << SHIFT;
const MASK = BLOCK - 1;

export class PackedStrings {
  /** The joined blocks of BLOCK strings, and where each string ends in its block. */
  private readonly blocks: string[] = [];
  private readonly blockEnds: (Uint16Array | Int32Array)[] = [];
  /** The strings of the block being filled, as given, and their ends. */
  private pending: string[] = [];
  private readonly pendingEnds = new Int32Array(BLOCK);
  private count = 0;

  /** Appends `s`; its number is the count of strings added before it. */
  add(s: string): void {
    const at = this.count++ & MASK;
    this.pendingEnds[at] = (at === 0 ? 0 : this.pendingEnds[at - 1]!) + s.length;
    this.pending.push(s);
    if (at === MASK) this.seal();
  }

  /** The string numbered `i`. */
  get(i: number): string {
    const block = i >>> SHIFT;
    const at = i & MASK;
    if (block === this.blocks.length) return this.pending[at]!;
    const ends = this.blockEnds[block]!;
    return this.blocks[block]!.slice(at === 0 ? 0 : ends[at - 1], ends[at]);
  }

  /** Joins the full pending block; its ends fit two bytes each unless it is over 65,535 characters. */
  private seal(): void {
    this.blocks.push(this.pending.join(''));
    this.blockEnds.push(this.pendingEnds[MASK]! <= 0xffff ? Uint16Array.from(this.pendingEnds) : this.pendingEnds.slice());
    this.pending = [];
  }
}
