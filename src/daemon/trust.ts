/**
 * The trust features' part of a run (issue 10): reads the trust state before planning, hands the planner its trust
 * filter, and records what an accepted run saw (source counts, the missing set, the config scope) once it applied.
 */
import type { Config } from '../config/schema.js';
import type { DesiredState } from '../domain/index.js';
import type { Mirror } from '../mirror/mirror.js';
import type { TrustStateStore } from '../mirror/trust-state.js';
import { MANAGED_BY_KEY } from '../planner/ownership.js';
import { configScope, createTrustFilter, scopeFingerprint, sourceCounts, type PlanTrustFilter, type TrustObservation } from '../planner/trust/index.js';

/** Overrides of one run (CLI flags). */
export interface TrustRunOptions {
  /** `sync --allow-source-shrink`. */
  allowSourceShrink?: boolean;
  /** `sync --accept-scope-change`. */
  acceptScopeChange?: boolean;
  allowDeletes?: number;
}

/** The trust part of one run. */
export interface PreparedTrust {
  filter: PlanTrustFilter;
  /** Records the run as accepted (call only after it applied; a dry run's writes never call it). */
  commit(): void;
  /** What the filter saw (after the first plan). */
  observation(): TrustObservation | undefined;
}

/** Builds the trust part of runs from the state DB. */
export interface RunTrust {
  prepare(desired: DesiredState, options: TrustRunOptions, now: number): PreparedTrust;
  /** Whether the state DB knows earlier runs of this sync.id (the state_lost guard). */
  knowsSync(): boolean;
}

/** Departments and positions the mirror shows owned by `syncId`. */
export function ownedPlatformRecords(mirror: Mirror, syncId: string): { entity: 'departments' | 'positions'; platformId: string }[] {
  const out: { entity: 'departments' | 'positions'; platformId: string }[] = [];
  for (const entity of ['departments', 'positions'] as const) {
    for (const r of mirror.all(entity)) if (r.status !== 'deleted' && r.metadata?.[MANAGED_BY_KEY] === syncId) out.push({ entity, platformId: r.id });
  }
  return out;
}

/** The trust part of runs of `config` over `store`; with `mirror`, owned departments and positions get a first-seen date. */
export function createRunTrust(store: TrustStateStore, config: Pick<Config, 'sources' | 'sync'>, mirror?: Mirror): RunTrust {
  return {
    knowsSync: () => store.knowsSync(),
    prepare(desired, options, now) {
      const scope = configScope(config);
      const previous = store.scope();
      let seen: TrustObservation | undefined;
      // Counted now: commit keeps no hold on the desired state (apply FILE lets it go before loading its plan).
      const counts = sourceCounts(desired);
      const filter = createTrustFilter(
        {
          desired,
          lastSnapshot: store.snapshotCounts(),
          maxShrinkPercent: config.sync.max_source_shrink_percent,
          missingBefore: store.missing(),
          grace: config.sync.removal_grace,
          ...(previous ? { previousScope: previous.scope } : {}),
          currentScope: scope,
          now,
          ...(options.allowSourceShrink !== undefined ? { allowSourceShrink: options.allowSourceShrink } : {}),
          ...(options.acceptScopeChange !== undefined ? { acceptScopeChange: options.acceptScopeChange } : {}),
          ...(options.allowDeletes !== undefined ? { allowDeletes: options.allowDeletes } : {}),
        },
        (o) => {
          seen = o;
        },
      );
      return {
        filter,
        observation: () => seen,
        commit() {
          store.commit({
            at: new Date(now).toISOString(),
            snapshot: counts,
            missing: seen?.missing ?? [],
            scope: { fingerprint: scopeFingerprint(scope), scope },
            ...(mirror ? { ownedSeen: ownedPlatformRecords(mirror, config.sync.id) } : {}),
          });
        },
      };
    },
  };
}
