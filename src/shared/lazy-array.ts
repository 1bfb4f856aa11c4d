/**
 * A read-only array whose elements are made when read (issue 31): a stopped apply of a million changes lists most of
 * them as not started, and an object per entry, held or mapped for a report, was hundreds of MB. To every reader it
 * is an array: `Array.isArray`, length, indexes, iteration, map, JSON (element by element in json-chunks.ts).
 */

/** The array index a property key names, or undefined. */
function indexOf(key: string | symbol): number | undefined {
  if (typeof key !== 'string' || key.length === 0 || key.length > 10) return undefined;
  const n = Number(key);
  return Number.isInteger(n) && n >= 0 && String(n) === key ? n : undefined;
}

/** An array of `length` elements, element `k` being `at(k)` each time it is read. Writes are refused. */
export function lazyArray<T>(length: number, at: (k: number) => T): T[] {
  const inRange = (k: number | undefined): k is number => k !== undefined && k < length;
  return new Proxy<T[]>([], {
    get(target, key, receiver) {
      if (key === 'length') return length;
      const k = indexOf(key);
      if (k !== undefined) return inRange(k) ? at(k) : undefined;
      return Reflect.get(target, key, receiver) as unknown;
    },
    has(target, key) {
      const k = indexOf(key);
      return k !== undefined ? inRange(k) : Reflect.has(target, key);
    },
    getOwnPropertyDescriptor(target, key) {
      if (key === 'length') return { value: length, writable: true, enumerable: false, configurable: false };
      const k = indexOf(key);
      if (inRange(k)) return { value: at(k), writable: false, enumerable: true, configurable: true };
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
    ownKeys() {
      const keys: string[] = [];
      for (let k = 0; k < length; k++) keys.push(String(k));
      keys.push('length');
      return keys;
    },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
}

/** `list` mapped by `fn` as a lazyArray: nothing is made until an element is read. */
export function lazyMap<T, U>(list: readonly T[], fn: (item: T) => U): U[] {
  return lazyArray(list.length, (k) => fn(list[k]!));
}
