/**
 * Issue 31 point 1: pending approvals of a plan too long for one TEXT value. A refused plan whose saved document is
 * longer than APPROVAL_INLINE_MAX is stored in chunks beside pending_approvals (saved_plan ''), and every reader works
 * from the chunks: the run's approvals (save, approve, apply exactly the stored plan), `approvals list`, `show` and
 * `approve` through the CLI (their outputs as for a plan stored inline), and `orgsync forget`, which scrubs the
 * person from the chunks and withdraws the approval. Small plans stay inline, as before.
 */
import { join } from 'node:path';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { writeFileSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { approvalJson, createRunApprovals, type ApprovalParts, type RefusedRun } from '../../src/daemon/approvals.js';
import { buildSavedPlan, mirrorStateHash, sourceSnapshotHash } from '../../src/daemon/saved-plan.js';
import type { DesiredState, Plan } from '../../src/domain/index.js';
import { APPROVAL_INLINE_MAX, ApprovalStore } from '../../src/mirror/approvals.js';
import { openStateDb } from '../../src/mirror/db.js';
import { forgetPerson } from '../../src/mirror/forget.js';
import { Mirror } from '../../src/mirror/mirror.js';
import { OwnershipStore } from '../../src/mirror/ownership.js';
import { insertHistoryBatch } from '../../src/mirror/history-batches.js';
import { TrustStateStore } from '../../src/mirror/trust-state.js';
import { planToJson } from '../../src/planner/render.js';
import { JSON_CHUNK_SIZE } from '../../src/shared/json-chunks.js';
import { cli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { memberCreate, memberSourceId, planOf } from './saved-plan-large-fixtures.js';

const SYNC = 'large';
const MEMBERS = 30_000;
const desired = { departments: [], positions: [], members: [], provided: { departments: true, positions: true, members: true }, quarantine: [] } as unknown as DesiredState;
const refusal = { guard: 'delete_threshold', message: 'the plan would remove 30000 members, more than sync.delete_threshold.max_count 10; nothing applied' };

let dir: string;
let db: Database.Database;
let config: string;

function parts() {
  const mirror = new Mirror(db);
  const ownership = new OwnershipStore(db, SYNC);
  return { store: new ApprovalStore(db, SYNC), trust: new TrustStateStore(db, SYNC), mirror, ownership, config: { sync: { id: SYNC, approve: [] } } as unknown as ApprovalParts['config'] };
}

/** A refused run of `plan` (its overridden plan is itself without the refusal). */
const refused = (plan: Plan, runId: string): RefusedRun => ({ plan: { ...plan, refusal }, desired, overridden: () => ({ plan, commitTrust: () => undefined }), runId, now: Date.UTC(2026, 10, 27, 12) });

/** The document stored for `plan` refused: the saved plan as JSON.stringify wrote it before issue 31. */
function expectedText(plan: Plan): string {
  const p = parts();
  const saved = buildSavedPlan({ ...plan, refusal }, { mirrorHash: mirrorStateHash(p.mirror, p.ownership), sourceHash: sourceSnapshotHash(desired) }, p.trust.planSigningKey());
  return JSON.stringify(saved);
}

const storedRow = (digest: string) => db.prepare('SELECT saved_plan FROM pending_approvals WHERE digest = ?').pluck().get(digest) as string;
const chunkRows = (digest: string) => db.prepare('SELECT chunk FROM pending_approval_chunks WHERE digest = ? ORDER BY seq').pluck().all(digest) as string[];

beforeEach(() => {
  dir = tempDir('orgsync-approvals-large-');
  db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
  config = join(dir, 'orgsync.yaml');
  writeFileSync(
    config,
    `${JSON.stringify({
      platform: { base_url: 'http://127.0.0.1:9', api_key: 'ek_unused_for_approvals_00000000' },
      state: { path: './state.db' },
      sync: { id: SYNC },
      sources: [{ name: 'hr', type: 'csv', members: { file: 'members.csv', fields: { id: 'id', display_name: 'name' } } }],
    })}\n`,
  );
});
afterEach(() => {
  if (db.open) db.close();
});

describe(`an approval of ${MEMBERS.toLocaleString('en-US')} changes, stored in chunks`, () => {
  it('is saved in chunks, listed, shown and approved through the CLI, then applied exactly by the next run', async () => {
    const plan = planOf(Array.from({ length: MEMBERS }, (_, i) => memberCreate(i)), SYNC);
    const decision = createRunApprovals(parts()).onRefusal(refused(plan, 'run-1'));
    expect(decision.kind).toBe('refused');
    const digest = decision.digest;
    const text = expectedText(plan);
    expect(text.length).toBeGreaterThan(APPROVAL_INLINE_MAX);
    expect(storedRow(digest)).toBe('');
    const chunks = chunkRows(digest);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.join('')).toBe(text);
    // The first chunk holds what was kept for inline until the limit was passed (the limit and one writer chunk).
    for (const c of chunks) expect(c.length).toBeLessThan(APPROVAL_INLINE_MAX + 2 * JSON_CHUNK_SIZE);
    const record = parts().store.get(digest)!;
    expect(approvalJson(record)).toMatchObject({ digest, guard: 'delete_threshold', status: 'pending', run_id: 'run-1', counts: plan.counts });
    db.close();

    const list = await cli('approvals', 'list', '--config', config, '--output', 'json');
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({ sync_id: SYNC, approvals: [expect.objectContaining({ digest, status: 'pending', counts: plan.counts })] });
    const shown = await cli('approvals', 'show', digest, '--config', config, '--output', 'json');
    expect(shown.code, shown.stderr).toBe(0);
    const doc = JSON.parse(shown.stdout);
    expect(doc.plan).toEqual(JSON.parse(JSON.stringify(planToJson({ ...plan, refusal, inputs: doc.plan.inputs }, { quarantine: [] }))));
    expect(doc.plan.changes).toHaveLength(MEMBERS);
    expect(doc).toMatchObject({ digest, status: 'pending', counts: plan.counts });
    const shownText = await cli('approvals', 'show', digest, '--config', config);
    expect(shownText.stdout).toContain(`Approval ${digest} (pending), refused by delete_threshold at 2026-11-27T12:00:00.000Z\n\n`);
    expect(shownText.stdout).toContain(`\n  ... and ${(MEMBERS - 50).toLocaleString('en-US')} more members to create (--full prints all)\n`);
    const approved = await cli('approvals', 'approve', digest, '--config', config);
    expect([approved.code, approved.stdout]).toEqual([0, `Approved ${digest} (delete_threshold): the next run applies exactly this plan if the platform and the sources still match what it was made from.\n`]);

    db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const next = createRunApprovals(parts()).onRefusal(refused(plan, 'run-2'));
    expect(next.kind).toBe('apply');
    if (next.kind !== 'apply') return;
    expect(next.digest).toBe(digest);
    expect(next.plan.changes).toHaveLength(MEMBERS);
    expect(next.plan.changes[MEMBERS - 1]).toEqual(JSON.parse(JSON.stringify(plan.changes[MEMBERS - 1])));
    expect(parts().store.get(digest)!.status).toBe('used');
  }, 180_000);

  it('forget scrubs the person from the chunks and withdraws the approval', () => {
    const plan = planOf(Array.from({ length: MEMBERS }, (_, i) => memberCreate(i)), SYNC);
    const { digest } = createRunApprovals(parts()).onRefusal(refused(plan, 'run-1'));
    expect(chunkRows(digest).join('')).toContain('"p7@acme.test"');
    insertHistoryBatch(db, { at: 1, runId: 'run-0', trigger: 'sync' }, [
      { entity: 'members', source_id: memberSourceId(7), platform_id: null, op: 'create', description: 'create member', fields: JSON.stringify({ email: { new: 'p7@acme.test' } }), result: 'applied', message: null },
    ]);
    const report = forgetPerson(db, { sourceIds: [memberSourceId(7)], platformIds: [] }, Date.UTC(2026, 10, 27, 13));
    expect(report.approvalsWithdrawn).toEqual([digest]);
    const after = chunkRows(digest).join('');
    expect(after).not.toContain('p7@acme.test');
    expect(after).toContain('"[forgotten]"');
    expect(after).toContain('"p8@acme.test"');
  }, 120_000);

  it('a small plan stays inline in saved_plan, as before', () => {
    const plan = planOf([memberCreate(1), memberCreate(2)], SYNC);
    const { digest } = createRunApprovals(parts()).onRefusal(refused(plan, 'run-1'));
    expect(storedRow(digest)).toBe(expectedText(plan));
    expect(chunkRows(digest)).toEqual([]);
  });
});
