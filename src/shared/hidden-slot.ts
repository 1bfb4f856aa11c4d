/**
 * Hidden slots of the compact records and changes (issue 31): a value kept under a symbol as a non-enumerable own
 * property, so JSON, spreads, Object.keys and digests never see it.
 */

/** One descriptor reused for every slot: defining a slot allocates nothing per record. */
const SLOT: PropertyDescriptor = { value: undefined, writable: true, enumerable: false, configurable: true };

/** Puts `value` under `key` on `target` as a hidden slot. */
export function keepInSlot(target: object, key: symbol, value: unknown): void {
  SLOT.value = value;
  Object.defineProperty(target, key, SLOT);
  SLOT.value = undefined;
}
