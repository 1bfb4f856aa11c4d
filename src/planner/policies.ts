/** Policies (as in external-dns plan/policy.go): named filters that run after the diff. */
import type { SyncPolicy } from '../config/sync.js';
import type { Change, WithheldChange } from '../domain/index.js';

/** A policy: which changes it lets through. */
export interface Policy {
  description: string;
  allows(change: Change): boolean;
}

/** The policies by `sync.policy` name. */
export const POLICIES: Record<SyncPolicy, Policy> = {
  sync: { description: 'create, update and remove', allows: () => true },
  'upsert-only': { description: 'create and update, never remove', allows: (c) => c.op !== 'remove' },
  'create-only': { description: 'only create', allows: (c) => c.op === 'create' },
};

/**
 * Applies a policy. A change that depends on a withheld change is withheld too (its prerequisite will not happen),
 * so the kept changes are always executable. A change that completes a create (`completes`: a new member's status)
 * is judged as that create: it is part of it, not an update of an existing record.
 */
export function applyPolicy(changes: readonly Change[], policy: SyncPolicy): { kept: Change[]; withheld: WithheldChange[] } {
  const p = POLICIES[policy];
  const kept: Change[] = [];
  const withheld: WithheldChange[] = [];
  const held = new Set<string>();
  const byId = new Map(changes.map((c) => [c.id, c]));
  for (const c of changes) {
    // Its create is in this plan, or was applied by an earlier run (judged as a create all the same).
    const judged = c.completes === undefined ? c : (byId.get(c.completes) ?? { ...c, op: 'create' as const });
    if (!p.allows(judged)) {
      held.add(c.id);
      withheld.push({ change: c, why: `policy:${policy}` });
    } else if (c.dependsOn.some((d) => held.has(d))) {
      held.add(c.id);
      withheld.push({ change: c, why: `depends on a change withheld by policy:${policy}` });
    } else kept.push(c);
  }
  return { kept, withheld };
}
