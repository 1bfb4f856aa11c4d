/**
 * The saved plan format (issue 10): `orgsync plan --out plan.json` writes the plan with hashes of the mirror state and
 * of the source snapshot it was computed from, signed with a key kept in the state DB. This module builds, signs,
 * writes, reads and verifies that file (what approvals need too); applying one is the use case of
 * ./apply-saved-plan.ts. This is the plan -> approval -> apply path of change management.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writePrivateFile } from '../shared/private-file.js';
import { z } from 'zod';
import type { DesiredState, Plan } from '../domain/index.js';
import { PLAN_FORMAT_VERSION } from '../domain/index.js';
import type { Mirror } from '../mirror/mirror.js';
import type { OwnershipStore } from '../mirror/ownership.js';
import type { TrustStateStore } from '../mirror/trust-state.js';
import { OrgsyncError } from '../shared/errors.js';
import { redactSecrets } from '../shared/redact.js';

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

/** A saved plan refused (PLAN_REFUSED, exit 2): `file` names it. */
export const planRefused = (file: string, why: string): OrgsyncError => new OrgsyncError('PLAN_REFUSED', `${file}: ${why}`);

/** What to do with a file that is not a saved plan. */
const SAVE_ONE = 'save one with `orgsync plan --out FILE`';

/** What a JSON document that is no saved plan is instead, for the message (issue 32: say what it is not). */
function whatItIs(json: unknown, issue: string): string {
  const doc = json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
  if (doc && 'in_sync' in doc && 'summary' in doc && Array.isArray(doc.changes)) return 'it is the output of `orgsync plan --output json`, which is for reading and carries no signature';
  return issue;
}

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

/** Checks a saved plan document given as text (`file` names it in messages): shape, sync id, signature. */
export function parseSavedPlan(text: string, file: string, syncId: string, key: Buffer): SavedPlanFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new OrgsyncError('PLAN_REFUSED', `${file} is not a saved plan (not JSON: ${(err as Error).message}): ${SAVE_ONE}`);
  }
  const parsed = savedPlanShape.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const issue = first ? `${first.path.join('.') || 'document'}: ${first.message}` : 'invalid';
    // Another kind of file altogether, or a saved plan of another format version (made by another orgsync).
    if ((json as { kind?: unknown } | null)?.kind !== SAVED_PLAN_KIND) throw new OrgsyncError('PLAN_REFUSED', `${file} is not a saved plan (${whatItIs(json, issue)}): ${SAVE_ONE}`);
    throw planRefused(file, `not a saved plan of this orgsync: ${issue}; make a new one with \`orgsync plan --out FILE\``);
  }
  const saved = json as SavedPlanFile;
  const { integrity, ...doc } = saved;
  const expected = Buffer.from(sign(doc, key));
  const given = Buffer.from(integrity);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw planRefused(file, 'the plan file was edited after it was written, or was made with another state DB (integrity check failed); make a new plan');
  }
  if (saved.sync_id !== syncId || saved.plan.syncId !== syncId) throw planRefused(file, `the plan is for sync ${saved.sync_id}, the config is sync ${syncId}`);
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

/** Signs and writes the plan of a plan-mode run (`orgsync plan --out F`); `desired` is what that run read. */
export function savePlan(file: string, plan: Plan, desired: DesiredState, state: { mirror: Mirror; ownership: OwnershipStore; trust: TrustStateStore }): SavedPlanFile {
  const saved = buildSavedPlan(plan, { mirrorHash: mirrorStateHash(state.mirror, state.ownership), sourceHash: sourceSnapshotHash(desired) }, state.trust.planSigningKey());
  writeSavedPlan(file, saved);
  return saved;
}
