/**
 * Pending approvals (issue 20), the run's part: a plan a guard refused is saved signed in the state DB under a short
 * digest; a run whose plan has an approved digest (`sync.approve`, or `orgsync approvals approve`) applies exactly
 * that plan when the platform and the sources still match what it was made from, else refuses, says what changed and
 * saves the new plan as a new pending approval. An approval is used once.
 */
import { createHash } from 'node:crypto';
import type { Config } from '../config/schema.js';
import type { DesiredState, Plan, PlatformDepartment } from '../domain/index.js';
import type { ApprovalRecord, ApprovalStore } from '../mirror/approvals.js';
import type { Mirror } from '../mirror/mirror.js';
import type { OwnershipStore } from '../mirror/ownership.js';
import type { TrustStateStore } from '../mirror/trust-state.js';
import type { PlanReportContext } from '../planner/report/index.js';
import { jsonChunks } from '../shared/json-chunks.js';
import { parseJsonChunks } from '../shared/json-stream-reader.js';
import { buildSavedPlan, mirrorStateHash, parseSavedPlanChunks, sourceSnapshotHash, staleInputs, updateWithChunks, type SavedPlanFile } from './saved-plan.js';

/** The digest of a saved plan: `sha256:` + 12 hex of what it does and what it was made from (not when). */
export function approvalDigest(saved: Pick<SavedPlanFile, 'sync_id' | 'inputs' | 'plan'>): string {
  const what = {
    sync_id: saved.sync_id,
    inputs: saved.inputs,
    guard: saved.plan.refusal?.guard ?? null,
    changes: saved.plan.changes.map((c) => ({ id: c.id, request: c.request ?? null })),
  };
  // Hashed chunk by chunk: the canonical JSON of a million changes is longer than a string can be.
  return `sha256:${updateWithChunks(createHash('sha256'), jsonChunks(what, 'canonical')).digest('hex').slice(0, 12)}`;
}

/** The report context of a plan made over `mirror` (the tree and the departments of removed members). */
export function reportContextOf(mirror: Mirror, plan: Plan, quarantine: DesiredState['quarantine'] = []): PlanReportContext {
  const departments = mirror
    .all('departments')
    .filter((d: PlatformDepartment) => d.status !== 'deleted')
    .map((d) => ({ id: d.id, parent_id: d.parent_id, name: d.name }));
  const wanted = new Set(plan.changes.filter((c) => c.entity === 'members' && c.platformId).map((c) => c.platformId!));
  const memberDepartments: Record<string, string> = {};
  // By id: a plan of a few member changes (an `--only` run) must not read every member of the mirror.
  for (const id of wanted) {
    const m = mirror.get('members', id);
    if (m) memberDepartments[id] = m.department_id;
  }
  return { departments, memberDepartments, quarantine };
}

/** What a refused run does: apply an approved plan, or stay refused (with the new pending approval's digest). */
export type ApprovalDecision = { kind: 'apply'; digest: string; plan: Plan; commitTrust(): void } | { kind: 'refused'; digest: string; message: string };

/** What a refused run hands the approvals. */
export interface RefusedRun {
  /** The refused plan. */
  plan: Plan;
  desired: DesiredState;
  /**
   * The plan the guard stopped, with every overridable guard overridden (as `--allow-deletes N
   * --allow-source-shrink --accept-scope-change` would): the changes an approval applies. With its trust commit.
   */
  overridden(): { plan: Plan; commitTrust(): void };
  runId?: string;
  now: number;
}

/** The approvals part of runs (injected into runOnce; absent: refusals are not saved). */
export interface RunApprovals {
  onRefusal(run: RefusedRun): ApprovalDecision;
}

/** How to reach the state the approvals need. */
export interface ApprovalParts {
  store: ApprovalStore;
  trust: TrustStateStore;
  mirror: Mirror;
  ownership: OwnershipStore;
  config: Pick<Config, 'sync'>;
}

/** Why an approved digest cannot be applied to this run. */
function whyNot(digest: string, rec: ApprovalRecord | undefined, now: { mirrorHash: string; sourceHash: string }, key: Buffer, syncId: string): string {
  if (!rec) return `${digest} is no approval of sync ${syncId} in this state DB (see orgsync approvals list)`;
  if (rec.status === 'used') return `approval ${digest} was already used by run ${rec.usedByRun ?? '?'} at ${rec.usedAt ?? '?'} (an approval is used once)`;
  const saved = parseSavedPlanChunks(rec.savedPlan(), `approval ${digest}`, syncId, key);
  const stale = staleInputs(saved, now);
  return `approved plan ${digest} no longer applies: ${stale ?? 'the plan made now differs from it'}`;
}

/** The approvals of runs of `config` over the state DB. */
export function createRunApprovals(parts: ApprovalParts): RunApprovals {
  const { store, trust, mirror, ownership, config } = parts;
  const syncId = config.sync.id;
  return {
    onRefusal(run) {
      const refusal = run.plan.refusal!;
      const key = trust.planSigningKey();
      const full = run.overridden();
      const reviewed: Plan = { ...full.plan, refusal };
      const hashes = { mirrorHash: mirrorStateHash(mirror, ownership), sourceHash: sourceSnapshotHash(run.desired) };
      const saved = buildSavedPlan(reviewed, hashes, key);
      const digest = approvalDigest(saved);
      const at = new Date(run.now).toISOString();
      const existing = store.get(digest);
      const byConfig = config.sync.approve.includes(digest);
      if (existing && (existing.status === 'approved' || (byConfig && existing.status === 'pending'))) {
        // Exactly the plan reviewed: the stored, signed one (its digest says it matches the platform and sources now).
        const approved = parseSavedPlanChunks(existing.savedPlan(), `approval ${digest}`, syncId, key);
        if (!staleInputs(approved, hashes) && store.use(digest, at, run.runId ?? 'unknown', existing.status === 'approved' ? (existing.approvedBy ?? 'approvals approve') : 'sync.approve')) {
          const { refusal: _r, ...plan } = approved.plan;
          return { kind: 'apply', digest, plan, commitTrust: full.commitTrust };
        }
      }
      const notes: string[] = [];
      const asked = new Set([...config.sync.approve, ...store.list().filter((a) => a.status === 'approved').map((a) => a.digest)]);
      for (const d of asked) {
        if (d === digest && existing?.status !== 'used') continue;
        const rec = store.get(d);
        // Approvals of earlier plans that were used, and digests no longer asked for, say nothing.
        if (rec?.status === 'used' && !config.sync.approve.includes(d)) continue;
        if (rec?.status === 'superseded' && !config.sync.approve.includes(d)) continue;
        notes.push(whyNot(d, rec, hashes, key, syncId));
      }
      if (!existing || existing.status === 'superseded') {
        store.save({ digest, guard: refusal.guard, message: refusal.message, createdAt: at, ...(run.runId ? { runId: run.runId } : {}), savedPlan: jsonChunks(saved, 'compact'), context: JSON.stringify(reportContextOf(mirror, reviewed, run.desired.quarantine)) });
      }
      const message =
        `${refusal.message}; ${notes.length > 0 ? `${notes.join('; ')}; ` : ''}` +
        `the plan is saved as pending approval ${digest} (review it with \`orgsync approvals show ${digest} --output html\`, then add ${digest} to sync.approve or run \`orgsync approvals approve ${digest}\`)`;
      return { kind: 'refused', digest, message };
    },
  };
}

/**
 * An approval in `approvals list --output json` and /status (without the plan itself). Its counts are read from the
 * head of the stored plan (they come before the changes), not from the whole of it.
 */
export function approvalJson(a: ApprovalRecord): Record<string, unknown> {
  const saved = parseJsonChunks(a.savedPlan(), { stopAtKey: 'plan' }) as { counts?: unknown };
  return {
    digest: a.digest,
    guard: a.guard,
    status: a.status,
    created_at: a.createdAt,
    run_id: a.runId,
    message: a.message,
    counts: saved.counts ?? null,
    approved_at: a.approvedAt,
    approved_by: a.approvedBy,
    used_at: a.usedAt,
    used_by_run: a.usedByRun,
  };
}
