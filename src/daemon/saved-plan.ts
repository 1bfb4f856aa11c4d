/**
 * Saved plans (issue 10): `orgsync plan --out plan.json` writes the plan with hashes of the mirror state and of the
 * source snapshot it was computed from, signed with a key kept in the state DB; `orgsync apply plan.json` refreshes
 * the mirror, re-reads the sources and executes exactly that plan, or refuses (exit 2) when the file was edited or
 * when the platform or the sources changed since. This is the plan -> approval -> apply path of change management.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writePrivateFile } from '../shared/private-file.js';
import { z } from 'zod';
import type { DesiredState, EntityKind, Plan } from '../domain/index.js';
import { blockedRecords, countChanges, PLAN_FORMAT_VERSION } from '../domain/index.js';
import { applyChanges, type ChangeResult } from '../applier/index.js';
import type { Mirror } from '../mirror/mirror.js';
import type { OwnershipStore } from '../mirror/ownership.js';
import type { TrustStateStore } from '../mirror/trust-state.js';
import { isPlatformError, platformFailure } from '../platform/errors.js';
import { calculatePlan, lifecycleOptionsFrom } from '../planner/index.js';
import { EXIT, OrgsyncError } from '../shared/errors.js';
import { redactSecrets } from '../shared/redact.js';
import { refreshMirror } from './refresh-mirror.js';
import { partialExitCode, plannerSnapshot, type RunFailure, type RunObserver, type RunParts, type RunSummary } from './run-once.js';
import { createRunTrust } from './trust.js';

/** The `kind` of a saved plan file. */
export const SAVED_PLAN_KIND = 'orgsync-saved-plan';

/** A saved plan file (JSON). `integrity` signs everything else. */
export interface SavedPlanFile {
  kind: typeof SAVED_PLAN_KIND;
  format_version: number;
  sync_id: string;
  created_at: string;
  /** Hashes of what the plan was computed from. */
  inputs: { mirror_hash: string; source_hash: string };
  /** Changes per entity and operation (the plan's own counts), for reviewers. */
  counts: Plan['counts'];
  /** The plan: every change with its reason, request and dependencies; withheld changes with why and when due. */
  plan: Plan;
  /** `hmac-sha256:<hex>` over the canonical JSON of the other fields, keyed by the state DB's plan signing key. */
  integrity: string;
}

/** JSON with object keys sorted at every level (arrays keep their order). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = (v as Record<string, unknown>)[k];
    return out;
  });
}

const sha256 = (text: string): string => `sha256:${createHash('sha256').update(text).digest('hex')}`;
const byKey = <T>(key: (t: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

/** Hash of the platform state a plan depends on: live mirror records and the members this sync owns. */
export function mirrorStateHash(mirror: Mirror, ownership: OwnershipStore): string {
  const live = {
    departments: mirror.all('departments').filter((d) => d.status !== 'deleted').sort(byKey((d) => d.id)),
    positions: mirror.all('positions').filter((p) => p.status !== 'deleted').sort(byKey((p) => p.id)),
    members: mirror.all('members').filter((m) => m.status !== 'left').sort(byKey((m) => m.account_id)),
    owned: [...ownership.ownedMembers()].sort(byKey(([k]) => k)),
  };
  return sha256(canonicalJson(live));
}

/** Hash of a source snapshot: the desired records (without their origins, which name lines and DNs) and what is provided. */
export function sourceSnapshotHash(desired: DesiredState): string {
  const strip = <T extends { origin?: unknown; source_id: string }>(list: readonly T[]) =>
    list.map(({ origin: _origin, ...rest }) => rest).sort(byKey((r) => r.source_id));
  return sha256(canonicalJson({ departments: strip(desired.departments), positions: strip(desired.positions), members: strip(desired.members), provided: desired.provided }));
}

function sign(doc: Omit<SavedPlanFile, 'integrity'>, key: Buffer): string {
  return `hmac-sha256:${createHmac('sha256', key).update(canonicalJson(doc)).digest('hex')}`;
}

/** Builds the signed file of a plan. */
export function buildSavedPlan(plan: Plan, inputs: { mirrorHash: string; sourceHash: string }, key: Buffer): SavedPlanFile {
  const withInputs: Plan = { ...plan, inputs: { mirrorHash: inputs.mirrorHash, sourceHash: inputs.sourceHash } };
  const doc: Omit<SavedPlanFile, 'integrity'> = {
    kind: SAVED_PLAN_KIND,
    format_version: PLAN_FORMAT_VERSION,
    sync_id: plan.syncId,
    created_at: plan.createdAt,
    inputs: { mirror_hash: inputs.mirrorHash, source_hash: inputs.sourceHash },
    counts: plan.counts,
    plan: withInputs,
  };
  return { ...doc, integrity: sign(doc, key) };
}

/**
 * Writes a saved plan file. The file is signed data that `apply` executes, so it is never rewritten: when a
 * registered secret value (a `${VAR}`, `*_file` or key value of the config) would be in it, nothing is written.
 */
export function writeSavedPlan(file: string, saved: SavedPlanFile): void {
  const text = `${JSON.stringify(saved, null, 2)}\n`;
  if (redactSecrets(text) !== text) {
    throw new OrgsyncError('PLAN_REFUSED', `plan file ${file} not written: the plan would contain a secret value of the config (a \${VAR}, *_file or key value); keep secrets out of source fields and mappings`);
  }
  try {
    writePrivateFile(file, text);
  } catch (err) {
    throw new OrgsyncError('USAGE', `cannot write plan file ${file}: ${(err as Error).message}`, { cause: err });
  }
}

const savedPlanShape = z.looseObject({
  kind: z.literal(SAVED_PLAN_KIND),
  format_version: z.literal(PLAN_FORMAT_VERSION),
  sync_id: z.string(),
  created_at: z.string(),
  inputs: z.looseObject({ mirror_hash: z.string(), source_hash: z.string() }),
  counts: z.record(z.string(), z.unknown()),
  plan: z.looseObject({ syncId: z.string(), changes: z.array(z.looseObject({ id: z.string() })), withheld: z.array(z.unknown()), warnings: z.array(z.unknown()) }),
  integrity: z.string(),
});

const refused = (file: string, why: string): OrgsyncError => new OrgsyncError('PLAN_REFUSED', `${file}: ${why}`);

/**
 * Reads and checks a saved plan file: its shape, that it is this sync's, and its signature (an edited file is
 * refused, exit 2). The state DB's key signs it, so a plan is only accepted by the state DB that made it.
 */
export function readSavedPlan(file: string, syncId: string, key: Buffer): SavedPlanFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new OrgsyncError('USAGE', `cannot read plan file ${file}: ${(err as Error).message}`, { cause: err });
  }
  return parseSavedPlan(text, file, syncId, key);
}

/** Checks a saved plan document given as text (`label` names it in messages): shape, sync id, signature. */
export function parseSavedPlan(text: string, file: string, syncId: string, key: Buffer): SavedPlanFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw refused(file, `not a saved plan: invalid JSON (${(err as Error).message})`);
  }
  const parsed = savedPlanShape.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw refused(file, `not a saved plan of this orgsync: ${issue ? `${issue.path.join('.') || 'document'}: ${issue.message}` : 'invalid'}`);
  }
  const saved = json as SavedPlanFile;
  const { integrity, ...doc } = saved;
  const expected = Buffer.from(sign(doc, key));
  const given = Buffer.from(integrity);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw refused(file, 'the plan file was edited after it was written, or was made with another state DB (integrity check failed); make a new plan');
  }
  if (saved.sync_id !== syncId || saved.plan.syncId !== syncId) throw refused(file, `the plan is for sync ${saved.sync_id}, the config is sync ${syncId}`);
  return saved;
}

/**
 * What changed since a saved plan was made, given the current hashes (the staleness check of `apply`, for callers
 * that refreshed and read the sources already); undefined when both still match.
 */
export function staleInputs(saved: Pick<SavedPlanFile, 'inputs' | 'created_at'>, now: { mirrorHash: string; sourceHash: string }): string | undefined {
  const changed = [
    ...(now.mirrorHash !== saved.inputs.mirror_hash ? ['the platform (the mirror state differs)'] : []),
    ...(now.sourceHash !== saved.inputs.source_hash ? ['the sources'] : []),
  ];
  return changed.length > 0 ? `${changed.join(' and ')} changed since the plan was made (${saved.created_at})` : undefined;
}

/** What applying a saved plan needs (the CLI builds them from the run environment). */
export interface SavedPlanDeps extends RunParts {
  trust: TrustStateStore;
  readDesiredState(signal?: AbortSignal): Promise<DesiredState>;
  observer?: RunObserver;
  callStats?(): { requests: number; rateLimited: number };
}

function toFailure(r: ChangeResult): RunFailure {
  const platformId = r.platformId ?? r.change.platformId;
  return { id: r.change.id, entity: r.change.entity, op: r.change.op, thirdId: r.change.thirdId, ...(platformId ? { platformId } : {}), status: r.status, message: r.message ?? r.status };
}

/**
 * Applies a saved plan: checks the file, refreshes the mirror, re-reads the sources, refuses (PLAN_REFUSED, exit 2)
 * when either hash differs, then executes exactly the plan's changes (no re-plan: a change the platform no longer
 * accepts is reported, and the next sync picks it up). Returns the run summary.
 */
export async function applySavedPlan(deps: SavedPlanDeps, file: string): Promise<RunSummary> {
  const { config, client, mirror, ownership, logger, clock } = deps;
  const started = clock.now();
  const callsAtStart = deps.callStats?.() ?? { requests: 0, rateLimited: 0 };
  const saved = readSavedPlan(file, config.sync.id, deps.trust.planSigningKey());
  const plan = saved.plan;
  if (plan.refusal) {
    throw new OrgsyncError('GUARD_TRIPPED', `${file}: the plan was refused by ${plan.refusal.guard} when it was made, so it cannot be applied: ${plan.refusal.message}`);
  }
  const refresh = async (entities?: readonly EntityKind[]): Promise<void> => {
    try {
      await refreshMirror({
        client,
        mirror,
        clock,
        logger,
        overlapSeconds: config.state.mirror_overlap_seconds,
        fullWalkEveryMs: config.state.full_walk_every,
        ...(entities ? { entities } : {}),
        ...(deps.signal ? { signal: deps.signal } : {}),
      });
    } catch (err) {
      if (isPlatformError(err)) throw platformFailure(err);
      throw err;
    }
  };
  await refresh();
  const refreshedAt = clock.now();
  const mirrorHash = mirrorStateHash(mirror, ownership);
  if (mirrorHash !== saved.inputs.mirror_hash) {
    throw refused(file, `the platform changed since the plan was made (${saved.created_at}): the mirror state differs; nothing applied, make a new plan`);
  }
  const desired = await deps.readDesiredState(deps.signal);
  const readAt = clock.now();
  if (sourceSnapshotHash(desired) !== saved.inputs.source_hash) {
    throw refused(file, `the sources changed since the plan was made (${saved.created_at}); nothing applied, make a new plan`);
  }
  logger.info({ file, changes: plan.changes.length, created_at: saved.created_at }, 'applying a saved plan');

  // The trust state advances as in a sync run (missing-since counters, source counts, scope).
  const trust = createRunTrust(deps.trust, config, mirror).prepare(desired, {}, clock.now());
  calculatePlan(desired, plannerSnapshot(mirror, ownership), {
    syncId: config.sync.id,
    policy: config.sync.policy,
    memberRemoval: config.sync.member_removal,
    deleteThreshold: config.sync.delete_threshold,
    adopt: config.sync.adopt,
    lifecycle: lifecycleOptionsFrom(config.sync),
    now: clock.now(),
    trust: trust.filter,
    ...(config.sync.root_department !== undefined ? { rootDepartment: config.sync.root_department } : {}),
  });

  const plannedAt = clock.now();
  deps.observer?.onPlan?.(plan, desired);
  deps.observer?.onApplyStart?.(plan.changes.length);
  const result = await applyChanges(
    plan.changes,
    { client, mirror, ownership, logger, clock, syncId: config.sync.id, adopt: config.sync.adopt, refresh },
    {
      concurrency: config.platform.concurrency,
      maxFailures: config.sync.max_failures,
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.observer?.onChangeResult ? { onResult: deps.observer.onChangeResult } : {}),
      keep: 'unsuccessful',
    },
  );
  const failures = result.results.filter((r) => r.status !== 'applied' && r.status !== 'adopted' && r.status !== 'skipped_admin' && r.status !== 'not_started').map(toFailure);
  const notStarted = result.results.filter((r) => r.status === 'not_started').map(toFailure);
  if (!result.stopped) trust.commit();
  // A lost lease or a refused credential fails the apply (as in a sync); a shutdown only stops it.
  const halted = result.stopReason && result.stopReason.kind !== 'shutdown' ? result.stopReason : undefined;
  const partial = failures.length > 0 || notStarted.length > 0 || desired.quarantine.length > 0;
  const calls = deps.callStats?.() ?? { requests: 0, rateLimited: 0 };
  // Where the time went (RunSummary.phases, as runOnce reports it); the plan itself was made by `orgsync plan`.
  const phases = { refreshMs: refreshedAt - started, sourcesMs: readAt - refreshedAt, planMs: plannedAt - readAt, applyMs: clock.now() - plannedAt };
  const summary: RunSummary = {
    syncId: config.sync.id,
    mode: 'apply',
    result: halted ? 'failed' : result.stopped ? 'stopped' : partial ? 'partial' : plan.changes.length === 0 ? 'in_sync' : 'applied',
    exitCode: result.stopped ? EXIT.FAILED : partial ? partialExitCode({ failures, notStarted }, config.sync.exit_code_on_quarantine) : EXIT.OK,
    dryRun: false,
    startedAt: new Date(started).toISOString(),
    durationMs: clock.now() - started,
    plan: { ...plan, counts: countChanges(plan.changes) },
    applied: result.applied,
    byStatus: result.byStatus,
    failures,
    notStarted,
    quarantined: desired.quarantine,
    blocked: blockedRecords(plan),
    skippedAdmin: result.byStatus.skipped_admin,
    replanRounds: 0,
    notConverged: [],
    apiCalls: calls.requests - callsAtStart.requests,
    rateLimited: calls.rateLimited - callsAtStart.rateLimited,
    phases,
    ...(result.stopReason ? { stop: result.stopReason } : {}),
    ...(halted
      ? { error: `${halted.message}: stopped after ${Object.values(result.applied).reduce((n, ops) => n + Object.values(ops).reduce((a, b) => a + b, 0), 0)} writes` }
      : result.stopped
        ? { error: 'stopped by a shutdown signal: writes in flight finished, nothing new was started' }
        : {}),
  };
  return summary;
}


/** Signs and writes the plan of a plan-mode run (`orgsync plan --out F`); `desired` is what that run read. */
export function savePlan(file: string, plan: Plan, desired: DesiredState, state: { mirror: Mirror; ownership: OwnershipStore; trust: TrustStateStore }): SavedPlanFile {
  const saved = buildSavedPlan(plan, { mirrorHash: mirrorStateHash(state.mirror, state.ownership), sourceHash: sourceSnapshotHash(desired) }, state.trust.planSigningKey());
  writeSavedPlan(file, saved);
  return saved;
}
