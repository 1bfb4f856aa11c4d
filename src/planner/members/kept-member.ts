/**
 * What the compact member changes (source-create.ts, suspend-new.ts) are built from: a desired member kept in a
 * hidden slot, and properties derived from it when read. A derived property is an own enumerable accessor, so JSON,
 * spreads, digests and comparisons see a plain change; the member is kept with keepInSlot (src/shared/hidden-slot.ts).
 */
import type { DesiredMember } from '../../domain/index.js';

/** The slot holding the change's desired member. */
export const MEMBER = Symbol('member');

/** A change that keeps its desired member. */
export interface KeptMember {
  [MEMBER]: DesiredMember;
}

/** An own enumerable property whose value `get` derives when read. */
export function derived<T>(get: (this: T) => unknown): PropertyDescriptor {
  return { get, enumerable: true, configurable: true };
}
