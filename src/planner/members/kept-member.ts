/**
 * What the compact member changes (source-create.ts, suspend-new.ts) are built from: the fields of the desired member
 * a create posts, kept in a hidden slot as one string, and properties derived from them when read. A derived property
 * is an own enumerable accessor, so JSON, spreads, digests and comparisons see a plain change; the string is kept
 * with keepInSlot (src/shared/hidden-slot.ts). An initial import of a million members holds a million creates (issue
 * 42: the desired members themselves are staged in the state DB, not held), so each keeps one string of its member's
 * source id, name, e-mail, phone and title, not a record with its origin and strings of its own.
 */
import type { DesiredMember } from '../../domain/index.js';

/** The slot holding the change's packed member. */
export const MEMBER = Symbol('member');

/** What a create posts of its desired member. */
export type CreatedMember = Pick<DesiredMember, 'source_id' | 'display_name' | 'email' | 'phone' | 'title'>;

/** A change that keeps its member packed. */
export interface KeptMember {
  [MEMBER]: string;
}

/** The member's posted fields as one string, each as `<length>:<value>` (any character may appear in a value). */
export function packMember(d: DesiredMember): string {
  const parts: string[] = [];
  for (const v of [d.source_id, d.display_name, d.email ?? '', d.phone ?? '', d.title ?? '']) parts.push(`${v.length}:`, v);
  // join, not +=: a flat string of its own characters, not a tree of pieces that keeps every piece alive.
  return parts.join('');
}

/** The member packMember packed (an empty e-mail, phone or title reads as absent, as a create treats it). */
export function unpackMember(packed: string): CreatedMember {
  const values: string[] = [];
  let i = 0;
  for (let k = 0; k < 5; k++) {
    const colon = packed.indexOf(':', i);
    const n = Number(packed.slice(i, colon));
    values.push(packed.slice(colon + 1, colon + 1 + n));
    i = colon + 1 + n;
  }
  const [source_id, display_name, email, phone, title] = values as [string, string, string, string, string];
  return { source_id, display_name, ...(email ? { email } : {}), ...(phone ? { phone } : {}), ...(title ? { title } : {}) };
}

/** The source id of a packed member (read without unpacking the rest). */
export function packedSourceId(packed: string): string {
  const colon = packed.indexOf(':');
  return packed.slice(colon + 1, colon + 1 + Number(packed.slice(0, colon)));
}

/** An own enumerable property whose value `get` derives when read. */
export function derived<T>(get: (this: T) => unknown): PropertyDescriptor {
  return { get, enumerable: true, configurable: true };
}
