/** Withholding a change withholds what depends on it, so the kept changes stay executable. */
import type { Change, WithheldChange } from '../../domain/index.js';

/** What to hold back and why (undefined: keep). */
export type HoldDecision = { why: string; dueAt?: string } | undefined;

/**
 * Splits `changes` (a valid order) by `decide`; a change that depends on a held change is held too, with
 * `depends on <id> (<why>)`.
 */
export function withholdWhere(changes: readonly Change[], decide: (c: Change) => HoldDecision): { kept: Change[]; withheld: WithheldChange[] } {
  // Copied only from the first change held back: a plan kept whole (a million creates) is not copied.
  let kept: Change[] | undefined;
  const withheld: WithheldChange[] = [];
  const held = new Map<string, string>();
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i]!;
    const d = decide(c);
    const dep = d === undefined && held.size > 0 ? c.dependsOn.find((id) => held.has(id)) : undefined;
    if (d === undefined && dep === undefined) {
      kept?.push(c);
      continue;
    }
    kept ??= changes.slice(0, i);
    if (d) {
      held.set(c.id, d.why);
      withheld.push({ change: c, why: d.why, ...(d.dueAt ? { dueAt: d.dueAt } : {}) });
    } else {
      const why = `depends on ${dep!} (${held.get(dep!)!})`;
      held.set(c.id, why);
      withheld.push({ change: c, why });
    }
  }
  return { kept: kept ?? (changes as Change[]), withheld };
}
