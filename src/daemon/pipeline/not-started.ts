/**
 * The changes a stopped apply never started, as the summary lists them (issue 31): a shutdown during the apply of a
 * million changes leaves most of them unstarted, and a failure object for each, held until the summary is printed,
 * was 270 MB at the peak. The applier gives their plan positions (ApplyResult.notStarted); the summary's list reads
 * each failure from its change when it is read, so holding the list costs the positions only.
 */
import type { ApplyResult, ChangeResult } from '../../applier/index.js';
import type { Change } from '../../domain/index.js';
import { toFailure, type RunFailure } from './run-state.js';

/** Lists made by notStartedList: read-only, so added to only through appendFailures. */
const lazyLists = new WeakSet<object>();

/** The array index a property key names, or undefined. */
function indexOf(key: string | symbol): number | undefined {
  if (typeof key !== 'string' || key.length === 0 || key.length > 10) return undefined;
  const n = Number(key);
  return Number.isInteger(n) && n >= 0 && String(n) === key ? n : undefined;
}

/**
 * The failures of the changes at `positions` of `changes`, never started for `message`, after the failures `head`:
 * an array to every reader (length, indexes, iteration, map, JSON), whose elements past the head are made when
 * read. Read-only.
 */
export function notStartedList(changes: readonly Change[], positions: ArrayLike<number>, message: string, head: readonly RunFailure[] = []): RunFailure[] {
  const length = head.length + positions.length;
  const at = (k: number): RunFailure => (k < head.length ? head[k]! : toFailure({ change: changes[positions[k - head.length]!]!, status: 'not_started', message }));
  const inRange = (k: number | undefined): k is number => k !== undefined && k < length;
  const list = new Proxy<RunFailure[]>([], {
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
  lazyLists.add(list);
  return list;
}

/** `list` with `more` added at its end: the same array, or a plain copy when `list` is a read-only notStartedList. */
export function appendFailures(list: RunFailure[], more: Iterable<RunFailure>): RunFailure[] {
  const out = lazyLists.has(list) ? Array.from(list) : list;
  for (const f of more) out.push(f);
  return out;
}

/**
 * The not-started failures of an apply's result: first those kept among its results (a write refused as it was about
 * to start), then those left unstarted at its end (by position, read when read). `changes` are the applied changes.
 */
export function notStartedOf(result: Pick<ApplyResult, 'results' | 'notStarted'>, changes: readonly Change[]): RunFailure[] {
  const kept = result.results.filter((r: ChangeResult) => r.status === 'not_started').map(toFailure);
  const left = result.notStarted;
  if (!left || left.positions.length === 0) return kept;
  return notStartedList(changes, left.positions, left.message, kept);
}
