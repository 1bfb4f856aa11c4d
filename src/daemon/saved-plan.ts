/**
 * The saved plan format (issue 10): `orgsync plan --out plan.json` writes the plan with hashes of the mirror state and
 * of the source snapshot it was computed from, signed with a key kept in the state DB. This module builds, signs,
 * writes, reads and verifies that file (what approvals need too); applying one is the use case of
 * ./apply-saved-plan.ts. This is the plan -> approval -> apply path of change management.
 */
import { createHash, createHmac, timingSafeEqual, type Hash, type Hmac } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { canonicalJson, jsonChunks } from '../shared/json-chunks.js';
import { JsonStreamError, parseJsonChunks } from '../shared/json-stream-reader.js';
import { writePrivateFileChunks } from '../shared/private-file.js';
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

export { canonicalJson } from '../shared/json-chunks.js';

/** Feeds text given in chunks to a hash (issue 31: the canonical JSON of a million records is longer than a string can be). */
export function updateWithChunks<H extends Hash | Hmac>(hash: H, chunks: Iterable<string>): H {
  for (const chunk of chunks) hash.update(chunk);
  return hash;
}

const byKey = <T>(key: (t: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

/**
 * Hash of the platform state a plan depends on: live mirror records and the members this sync owns, as the
 * canonical JSON of `{departments, members, owned, positions}` (members by account id, owned by source id), the
 * members and ownership records read a window at a time.
 */
export function mirrorStateHash(mirror: Mirror, ownership: OwnershipStore): string {
  return `sha256:${updateWithChunks(createHash('sha256'), mirrorChunks(mirror, ownership)).digest('hex')}`;
}

function* mirrorChunks(mirror: Mirror, ownership: OwnershipStore): Generator<string> {
  const departments = mirror.all('departments').filter((d) => d.status !== 'deleted').sort(byKey((d) => d.id));
  const positions = mirror.all('positions').filter((p) => p.status !== 'deleted').sort(byKey((p) => p.id));
  yield '{"departments":';
  yield* jsonChunks(departments, 'canonical');
  yield ',"members":';
  yield* arrayChunks(filter(mirror.scanMembers(), (m) => m.status !== 'left'));
  yield ',"owned":';
  yield* arrayChunks(ownership.owned());
  yield ',"positions":';
  yield* jsonChunks(positions, 'canonical');
  yield '}';
}

function* filter<T>(items: Iterable<T>, keep: (t: T) => boolean): Generator<T> {
  for (const t of items) if (keep(t)) yield t;
}

/** The canonical JSON of a list given one element at a time, in chunks of elements. */
function* arrayChunks(items: Iterable<unknown>): Generator<string> {
  let parts: string[] = ['['];
  let first = true;
  for (const item of items) {
    parts.push(`${first ? '' : ','}${canonicalJson(item)}`);
    first = false;
    if (parts.length >= 512) {
      yield parts.join('');
      parts = [];
    }
  }
  parts.push(']');
  yield parts.join('');
}

/** Hash of a source snapshot: the desired records (without their origins, which name lines and DNs) and what is provided. */
export function sourceSnapshotHash(desired: DesiredState): string {
  return `sha256:${updateWithChunks(createHash('sha256'), snapshotChunks(desired)).digest('hex')}`;
}

/**
 * The canonical JSON of `{departments, positions, members, provided}` with each record's origin left out and the
 * lists sorted by source id, record by record: no copy of the lists, no string of the whole.
 */
function* snapshotChunks(desired: DesiredState): Generator<string> {
  const lists = { departments: desired.departments, members: desired.members, positions: desired.positions } as const;
  // Canonical key order: departments, members, positions, provided.
  let sep = '{';
  for (const [name, list] of Object.entries(lists) as [string, readonly { origin?: unknown; source_id: string }[] | DesiredState['members']][]) {
    const sorted: Iterable<{ origin?: unknown; source_id: string }> = Array.isArray(list) ? list.slice().sort(byKey((r) => r.source_id)) : (list as DesiredState['members']).bySourceId();
    const parts: string[] = [`${sep}${JSON.stringify(name)}:[`];
    let i = 0;
    for (const record of sorted) {
      const { origin: _origin, ...rest } = record;
      parts.push(`${i++ === 0 ? '' : ','}${canonicalJson(rest)}`);
      if (parts.length >= 512) yield parts.splice(0).join('');
    }
    parts.push(']');
    yield parts.join('');
    sep = ',';
  }
  yield `,"provided":${canonicalJson(desired.provided)}}`;
}

/** The signature of a saved plan document: HMAC over its canonical JSON, fed chunk by chunk. */
function sign(doc: Omit<SavedPlanFile, 'integrity'>, key: Buffer): string {
  return `hmac-sha256:${updateWithChunks(createHmac('sha256', key), jsonChunks(doc, 'canonical')).digest('hex')}`;
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
  // Checked before the file is opened (a first pass over the chunks): a refused plan leaves an existing file as it was.
  // A chunk is whole JSON values joined, so a secret inside one string value is inside one chunk.
  for (const chunk of savedPlanChunks(saved)) {
    if (redactSecrets(chunk) !== chunk) {
      throw new OrgsyncError('PLAN_REFUSED', `plan file ${file} not written: the plan would contain a secret value of the config (a \${VAR}, *_file or key value); keep secrets out of source fields and mappings`);
    }
  }
  try {
    writePrivateFileChunks(file, savedPlanChunks(saved));
  } catch (err) {
    throw new OrgsyncError('USAGE', `cannot write plan file ${file}: ${(err as Error).message}`, { cause: err });
  }
}

/** The text of a saved plan file, `JSON.stringify(saved, null, 2)` and a newline, in chunks of whole values. */
export function* savedPlanChunks(saved: SavedPlanFile, chunkSize?: number): Generator<string> {
  yield* jsonChunks(saved, 'pretty', chunkSize);
  yield '\n';
}

const savedPlanShape = z.looseObject({
  kind: z.literal(SAVED_PLAN_KIND),
  format_version: z.literal(PLAN_FORMAT_VERSION),
  sync_id: z.string(),
  created_at: z.string(),
  inputs: z.looseObject({ mirror_hash: z.string(), source_hash: z.string() }),
  counts: z.record(z.string(), z.unknown()),
  // The changes are checked one by one (firstIssue): a parse of the whole array would copy a million objects.
  plan: z.looseObject({ syncId: z.string(), changes: z.array(z.unknown()), withheld: z.array(z.unknown()), warnings: z.array(z.unknown()) }),
  integrity: z.string(),
});

const changeShape = z.looseObject({ id: z.string() });

/** What makes the change at `index` of a saved plan no change (`plan.changes.<i>.<path>: message`), undefined when it is one. */
export function changeIssue(change: unknown, index: number): string | undefined {
  const parsed = changeShape.safeParse(change);
  if (parsed.success) return undefined;
  const first = parsed.error.issues[0];
  return first ? `${['plan', 'changes', index, ...first.path].join('.')}: ${first.message}` : 'invalid';
}

/** The first thing that makes `json` no saved plan (`path: message`), undefined when it is one. */
export function firstIssue(json: unknown): string | undefined {
  const parsed = savedPlanShape.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return first ? `${first.path.join('.') || 'document'}: ${first.message}` : 'invalid';
  }
  const changes = parsed.data.plan.changes;
  for (let i = 0; i < changes.length; i++) {
    const issue = changeIssue(changes[i], i);
    if (issue !== undefined) return issue;
  }
  return undefined;
}

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
  return parseSavedPlanChunks(fileChunks(file), file, syncId, key);
}

/** The bytes of a file, a MiB at a time; a file that cannot be read is a usage error naming it. */
export function* fileChunks(file: string, size = 1 << 20): Generator<Buffer> {
  const cannotRead = (err: unknown) => new OrgsyncError('USAGE', `cannot read plan file ${file}: ${(err as Error).message}`, { cause: err });
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    throw cannotRead(err);
  }
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(size);
      let n: number;
      try {
        n = readSync(fd, buf, 0, size, null);
      } catch (err) {
        throw cannotRead(err);
      }
      if (n === 0) return;
      yield n === size ? buf : buf.subarray(0, n);
    }
  } finally {
    closeSync(fd);
  }
}

/** Checks a saved plan document given as text (`file` names it in messages): shape, sync id, signature. */
export function parseSavedPlan(text: string, file: string, syncId: string, key: Buffer): SavedPlanFile {
  return parseSavedPlanChunks([text], file, syncId, key);
}

/**
 * Checks a saved plan document given in chunks (of a file, or of the state DB's approvals): parsed as it streams, no
 * string longer than one change is built; then shape, sync id and signature as parseSavedPlan.
 */
export function parseSavedPlanChunks(chunks: Iterable<Uint8Array | string>, file: string, syncId: string, key: Buffer): SavedPlanFile {
  let json: unknown;
  try {
    json = parseJsonChunks(chunks);
  } catch (err) {
    throw notJson(err, file);
  }
  refuseMisshapen(json, firstIssue(json), file);
  const saved = json as SavedPlanFile;
  const { integrity, ...doc } = saved;
  refuseUnsigned(file, integrity, sign(doc, key));
  refuseOtherSync(file, saved, syncId);
  return saved;
}

/** The refusal of a document that is not JSON (a JsonStreamError of the reader; any other error is rethrown). */
export function notJson(err: unknown, file: string): OrgsyncError {
  if (!(err instanceof JsonStreamError)) throw err;
  return new OrgsyncError('PLAN_REFUSED', `${file} is not a saved plan (not JSON: ${err.message}): ${SAVE_ONE}`);
}

/** Refuses `json` when `issue` (its first, see firstIssue) says it is no saved plan of this orgsync. */
export function refuseMisshapen(json: unknown, issue: string | undefined, file: string): void {
  if (issue === undefined) return;
  // Another kind of file altogether, or a saved plan of another format version (made by another orgsync).
  if ((json as { kind?: unknown } | null)?.kind !== SAVED_PLAN_KIND) throw new OrgsyncError('PLAN_REFUSED', `${file} is not a saved plan (${whatItIs(json, issue)}): ${SAVE_ONE}`);
  throw planRefused(file, `not a saved plan of this orgsync: ${issue}; make a new one with \`orgsync plan --out FILE\``);
}

/** Refuses a saved plan whose `integrity` is not the `expected` signature (compared in constant time). */
export function refuseUnsigned(file: string, integrity: string, expected: string): void {
  const want = Buffer.from(expected);
  const given = Buffer.from(integrity);
  if (given.length !== want.length || !timingSafeEqual(given, want)) throw integrityFailed(file);
}

/** The refusal of a saved plan whose signature does not match what it holds. */
export const integrityFailed = (file: string): OrgsyncError =>
  planRefused(file, 'the plan file was edited after it was written, or was made with another state DB (integrity check failed); make a new plan');

/** Refuses a saved plan of another sync id. */
export function refuseOtherSync(file: string, saved: Pick<SavedPlanFile, 'sync_id'> & { plan: Pick<Plan, 'syncId'> }, syncId: string): void {
  if (saved.sync_id !== syncId || saved.plan.syncId !== syncId) throw planRefused(file, `the plan is for sync ${saved.sync_id}, the config is sync ${syncId}`);
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
