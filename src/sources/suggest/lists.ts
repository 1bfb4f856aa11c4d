/**
 * Keys that read the same field of an element of a list, picked different ways: `workAssignments[0].jobTitle` and
 * `workAssignments[primaryIndicator=true].jobTitle`, `mobiles[0]` and `mobiles[nameCode.codeValue=Personal Cell]`,
 * `terminations[0]` and `terminations[-1]`. `sources suggest` keeps the one that says which element it means.
 */
import type { SampleKey } from './sample.js';

/** Keys that mark the primary element of a list (sample.ts walks them). */
const PRIMARY = new Set(['primary', 'primaryIndicator', 'isPrimary', 'preferred']);

type Selector = 'index' | 'latest' | 'primary' | 'typed';

/** How a key picks elements of lists: by position, the latest, the primary one, or what they are. */
function selectorsOf(k: SampleKey): Selector[] {
  return k.steps.flatMap((s): Selector[] => {
    if (s.kind === 'index') return [s.index < 0 ? 'latest' : 'index'];
    if (s.kind === 'filter') return [s.where.length === 1 && PRIMARY.has(s.where[0]!.key[0]!) ? 'primary' : 'typed'];
    return [];
  });
}

/**
 * `items` without the variants a better one of the same key makes moot: what the element is (typed) over the
 * primary one over `[0]`; with `latest`, `[-1]` (the latest of a history, such as terminations) over the others.
 * Order is kept.
 */
export function preferVariants<T>(items: readonly T[], keyOf: (t: T) => SampleKey, latest: boolean): T[] {
  const canon = (t: T) => JSON.stringify(keyOf(t).steps.map((s) => (s.kind === 'key' ? s.key : '*')));
  const groups = new Map<string, T[]>();
  for (const t of items) groups.set(canon(t), [...(groups.get(canon(t)) ?? []), t]);
  const dropped = new Set<T>();
  const rank: Selector[] = latest ? ['latest', 'typed', 'primary', 'index'] : ['typed', 'primary', 'index', 'latest'];
  for (const group of groups.values()) {
    let left = group;
    // List by list, left to right: keep the keys whose selector there is the best one present.
    for (let i = 0; left.length > 1 && i < selectorsOf(keyOf(left[0]!)).length; i++) {
      const best = rank.find((sel) => left.some((t) => selectorsOf(keyOf(t))[i] === sel));
      const kept = left.filter((t) => selectorsOf(keyOf(t))[i] === best);
      for (const t of left) if (!kept.includes(t)) dropped.add(t);
      left = kept;
    }
  }
  return items.filter((t) => !dropped.has(t));
}
