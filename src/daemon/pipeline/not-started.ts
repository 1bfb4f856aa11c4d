/**
 * The changes a stopped apply never started, as the summary lists them (issue 31): a shutdown during the apply of a
 * million changes leaves most of them unstarted, and a failure object for each, held until the summary is printed,
 * was 270 MB at the peak. The applier gives their plan positions (ApplyResult.notStarted); the summary's list reads
 * each failure from its change when it is read, so holding the list costs the positions only.
 */
import type { ApplyResult, ChangeResult } from '../../applier/index.js';
import type { Change } from '../../domain/index.js';
import { lazyArray } from '../../shared/lazy-array.js';
import { toFailure, type RunFailure } from './run-state.js';

/** Lists made by notStartedList: read-only, so added to only through appendFailures. */
const lazyLists = new WeakSet<object>();

/**
 * The failures of the changes at `positions` of `changes`, never started for `message`, after the failures `head`:
 * an array to every reader (length, indexes, iteration, map, JSON), whose elements past the head are made when
 * read. Read-only.
 */
export function notStartedList(changes: readonly Change[], positions: ArrayLike<number>, message: string, head: readonly RunFailure[] = []): RunFailure[] {
  const list = lazyArray(head.length + positions.length, (k): RunFailure => (k < head.length ? head[k]! : toFailure({ change: changes[positions[k - head.length]!]!, status: 'not_started', message })));
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
