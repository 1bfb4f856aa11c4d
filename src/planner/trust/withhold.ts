/** Withholding a change withholds what depends on it, so the kept changes stay executable. */
import type { Change, WithheldChange } from '../../domain/index.js';

/** What to hold back and why (undefined: keep). */
export type HoldDecision = { why: string; dueAt?: string } | undefined;

/**
 * Splits `changes` (a valid order) by `decide`; a change that depends on a held change is held too, with
 * `depends on <id> (<why>)`.
 */
export function withholdWhere(changes: readonly Change[], decide: (c: Change) => HoldDecision): { kept: Change[]; withheld: WithheldChange[] } {
  const kept: Change[] = [];
  const withheld: WithheldChange[] = [];
  const held = new Map<string, string>();
  for (const c of changes) {
    const d = decide(c);
    if (d) {
      held.set(c.id, d.why);
      withheld.push({ change: c, why: d.why, ...(d.dueAt ? { dueAt: d.dueAt } : {}) });
      continue;
    }
    const dep = c.dependsOn.find((id) => held.has(id));
    if (dep !== undefined) {
      const why = `depends on ${dep} (${held.get(dep)!})`;
      held.set(c.id, why);
      withheld.push({ change: c, why });
    } else kept.push(c);
  }
  return { kept, withheld };
}
