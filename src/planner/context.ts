/** Shared helpers of the per-entity diffs. */
import type { EntityKind, PlanRef, PlanValue, PlanWarning } from '../domain/index.js';
import type { PlannerSnapshot, PlanOptions } from './types.js';

/** Where a record points to: an existing platform id, or the create change that will make it (`@<change id>`). */
export type Target = string;

/** Marks a change id as a target. */
export function refTarget(changeId: string): Target {
  return `@${changeId}`;
}

/** The change id behind a target, or undefined for a platform id. */
export function targetRef(t: Target): string | undefined {
  return t.startsWith('@') ? t.slice(1) : undefined;
}

/** A target as a request body value. */
export function targetValue(t: Target): string | PlanRef {
  const ref = targetRef(t);
  return ref === undefined ? t : { ref };
}

/** A target as a path segment (`{ref:<id>}` is resolved by the applier). */
export function targetPath(t: Target): string {
  const ref = targetRef(t);
  return ref === undefined ? encodeURIComponent(t) : `{ref:${ref}}`;
}

/** The state the entity diffs share while one plan is computed. */
export interface DiffContext {
  syncId: string;
  opts: PlanOptions;
  warnings: PlanWarning[];
  /** Third ids of creates this sync started but may not have recorded. */
  pending: NonNullable<PlannerSnapshot['pendingCreates']>;
  /** Pending member creates: third_user_id -> the contact they posted. */
  pendingContacts?: ReadonlyMap<string, string>;
  /** Member creates of earlier runs that still owe their completing change (PlannerSnapshot.owedCompletions). */
  owedCompletions?: PlannerSnapshot['owedCompletions'];
  /**
   * Source ids of quarantined records, per entity. A quarantined record is absent from the desired state only because
   * it failed validation, not because HR removed it: it is never removed (a typo in an e-mail must not make a member leave).
   */
  held?: Record<EntityKind, ReadonlySet<string>>;
  /** Shared values per target (thousands of members point at the same department: one object, one array). */
  cache?: { values: Map<Target, string | PlanRef>; deps: Map<Target, string[]> };
}

/**
 * True when an owned record that is absent from the desired state is quarantined in the source: it is kept, with a
 * `quarantined_kept` warning, instead of being removed.
 */
export function keptBecauseQuarantined(ctx: DiffContext, entity: EntityKind, thirdId: string, platformId: string, name: string): boolean {
  if (!isQuarantined(ctx, entity, thirdId)) return false;
  ctx.warnings.push(quarantinedKeptWarning(entity, thirdId, platformId, name));
  return true;
}

/** True when a source id is quarantined in the source (absent only because it failed validation). */
export function isQuarantined(ctx: Pick<DiffContext, 'held'>, entity: EntityKind, thirdId: string): boolean {
  return thirdId !== '' && ctx.held?.[entity].has(thirdId) === true;
}

/** The `quarantined_kept` warning of an owned record kept because it is quarantined in the source. */
export function quarantinedKeptWarning(entity: EntityKind, thirdId: string, platformId: string, name: string): PlanWarning {
  return {
    code: 'quarantined_kept',
    entity,
    thirdId,
    platformId,
    message: `${entity} ${thirdId} ("${name}") is quarantined in the source; kept on the platform, not removed`,
  };
}

/** targetValue, shared per target within one plan. */
export function sharedValue(ctx: DiffContext, t: Target): string | PlanRef {
  const cache = (ctx.cache ??= { values: new Map(), deps: new Map() });
  let v = cache.values.get(t);
  if (v === undefined) cache.values.set(t, (v = targetValue(t)));
  return v;
}

/** depsOf(t), shared per target within one plan. */
export function sharedDeps(ctx: DiffContext, t: Target): string[] {
  const cache = (ctx.cache ??= { values: new Map(), deps: new Map() });
  let v = cache.deps.get(t);
  if (v === undefined) cache.deps.set(t, (v = depsOf(t)));
  return v;
}

/** No dependencies (shared frozen array: keeps large plans small). */
export const NO_DEPS: string[] = Object.freeze([]) as unknown as string[];

/** The dependency list of a value that may point to a change created in this run. */
export function depsOf(...targets: (Target | undefined)[]): string[] {
  const out: string[] = [];
  for (const t of targets) {
    const ref = t === undefined ? undefined : targetRef(t);
    if (ref !== undefined && !out.includes(ref)) out.push(ref);
  }
  return out.length === 0 ? NO_DEPS : out;
}

/** JSON-safe copy of a metadata object. */
export function metadataValue(m: Record<string, unknown> | undefined): Record<string, PlanValue> {
  return JSON.parse(JSON.stringify(m ?? {})) as Record<string, PlanValue>;
}
