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
  // Copied only from the first change held back: a plan the policy keeps whole (a million creates) is not copied.
  let kept: Change[] | undefined;
  const withheld: WithheldChange[] = [];
  const held = new Set<string>();
  const byId = completedCreates(changes);
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i]!;
    // Its create is in this plan, or was applied by an earlier run (judged as a create all the same).
    const judged = c.completes === undefined ? c : (byId.get(c.completes) ?? { ...c, op: 'create' as const });
    let why: string | undefined;
    if (!p.allows(judged)) why = `policy:${policy}`;
    else if (held.size > 0 && c.dependsOn.some((d) => held.has(d))) why = `depends on a change withheld by policy:${policy}`;
    if (why === undefined) {
      kept?.push(c);
      continue;
    }
    kept ??= changes.slice(0, i);
    held.add(c.id);
    withheld.push({ change: c, why });
  }
  return { kept: kept ?? (changes as Change[]), withheld };
}

/**
 * The changes that others complete (`completes`), by id: the few creates a later change finishes, not an index of
 * every change (a million-member import has a million creates and ten thousand completions). The last change of an
 * id wins, as in a Map built of them all.
 */
function completedCreates(changes: readonly Change[]): Map<string, Change> {
  const wanted = new Set<string>();
  for (const c of changes) if (c.completes !== undefined) wanted.add(c.completes);
  const byId = new Map<string, Change>();
  if (wanted.size === 0) return byId;
  for (const c of changes) {
    const id = c.id;
    if (wanted.has(id)) byId.set(id, c);
  }
  return byId;
}
