/**
 * What the compact member changes (source-create.ts, suspend-new.ts) are built from: a desired member kept in a
 * hidden slot, and properties derived from it when read. A derived property is an own enumerable accessor, so JSON,
 * spreads, digests and comparisons see a plain change; a slot is a non-enumerable symbol property no reader sees.
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

/** One descriptor reused for every slot: defining a slot allocates nothing per change. */
const SLOT: PropertyDescriptor = { value: undefined, writable: true, enumerable: false, configurable: true };

/** Puts `value` under `key` on `target` as a hidden slot. */
export function keepInSlot(target: object, key: symbol, value: unknown): void {
  SLOT.value = value;
  Object.defineProperty(target, key, SLOT);
  SLOT.value = undefined;
}
