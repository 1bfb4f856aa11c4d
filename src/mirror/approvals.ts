/**
 * The pending approvals of one sync id (issue 20), next to the trust state: plans a guard refused, saved signed
 * under a short digest, approved by config (`sync.approve`) or by `orgsync approvals approve`, used once.
 */
import type Database from 'better-sqlite3';
import { APPROVALS_SQL } from './migrations/023-approvals.js';
import { APPROVAL_CHUNKS_SQL } from './migrations/065-approval-plan-chunks.js';

/**
 * The longest saved plan kept in pending_approvals.saved_plan (characters); a longer one goes into
 * pending_approval_chunks (issue 31: a plan of a million changes is longer than a string can be).
 */
export const APPROVAL_INLINE_MAX = 4 * 1024 * 1024;
/** About how long one stored chunk is (whole JSON values joined up to it). */
const STORED_CHUNK = 1024 * 1024;

/** Where an approval stands. */
export type ApprovalStatus = 'pending' | 'approved' | 'used' | 'superseded';

/** One saved plan awaiting (or past) approval. */
export interface ApprovalRecord {
  digest: string;
  guard: string;
  message: string;
  createdAt: string;
  /** The run that was refused. */
  runId: string | null;
  /** The signed saved-plan document (JSON text, as `plan --out` writes it), read from the state DB in chunks when asked. */
  savedPlan(): Iterable<string>;
  /** The report context (JSON text: departments, member departments, quarantine), read when asked. */
  context(): string;
  status: ApprovalStatus;
  approvedAt: string | null;
  approvedBy: string | null;
  usedAt: string | null;
  usedByRun: string | null;
}

interface Row {
  digest: string;
  guard: string;
  message: string;
  created_at: string;
  run_id: string | null;
  status: ApprovalStatus;
  approved_at: string | null;
  approved_by: string | null;
  used_at: string | null;
  used_by_run: string | null;
}

/** The columns of a record (the plan and the context, which can be large, are read when asked). */
const COLUMNS = 'digest, guard, message, created_at, run_id, status, approved_at, approved_by, used_at, used_by_run';

const toRecord = (store: ApprovalStore, r: Row): ApprovalRecord => ({
  digest: r.digest,
  guard: r.guard,
  message: r.message,
  createdAt: r.created_at,
  runId: r.run_id,
  savedPlan: () => store.savedPlanChunks(r.digest),
  context: () => store.contextOf(r.digest),
  status: r.status,
  approvedAt: r.approved_at,
  approvedBy: r.approved_by,
  usedAt: r.used_at,
  usedByRun: r.used_by_run,
});

/** The approvals repository of one sync id. */
export class ApprovalStore {
  private readonly db: Database.Database;

  constructor(
    db: Database.Database,
    readonly syncId: string,
  ) {
    // A DB migrated past 023 by a build without it never runs it; the statements are idempotent.
    if (!db.readonly) db.exec(APPROVALS_SQL + APPROVAL_CHUNKS_SQL);
    this.db = db;
  }

  /** The saved plan of `digest`: the inline text, or its stored chunks in order (none when there is no such approval). */
  *savedPlanChunks(digest: string): Generator<string> {
    const inline = this.db.prepare('SELECT saved_plan FROM pending_approvals WHERE sync_id = ? AND digest = ?').pluck().get(this.syncId, digest) as string | undefined;
    if (inline === undefined) return;
    if (inline !== '') {
      yield inline;
      return;
    }
    yield* this.db.prepare('SELECT chunk FROM pending_approval_chunks WHERE sync_id = ? AND digest = ? ORDER BY seq').pluck().iterate(this.syncId, digest) as IterableIterator<string>;
  }

  /** The report context of `digest` (JSON text). */
  contextOf(digest: string): string {
    return (this.db.prepare('SELECT context FROM pending_approvals WHERE sync_id = ? AND digest = ?').pluck().get(this.syncId, digest) as string | undefined) ?? '{}';
  }

  /**
   * Stores a new approval's plan text: inline when it is at most APPROVAL_INLINE_MAX characters (as before issue 31),
   * else in chunks of about STORED_CHUNK; returns the saved_plan value ('' when chunked). Inside save's transaction.
   */
  private storePlan(digest: string, chunks: Iterable<string>): string {
    let parts: string[] = [];
    let size = 0;
    let seq = -1;
    const insert = this.db.prepare('INSERT INTO pending_approval_chunks (sync_id, digest, seq, chunk) VALUES (?, ?, ?, ?)');
    this.db.prepare('DELETE FROM pending_approval_chunks WHERE sync_id = ? AND digest = ?').run(this.syncId, digest);
    for (const chunk of chunks) {
      parts.push(chunk);
      size += chunk.length;
      if (seq < 0 && size <= APPROVAL_INLINE_MAX) continue;
      // Past the inline limit: what was kept goes out in stored chunks, and so does everything after it.
      if (size >= STORED_CHUNK) {
        insert.run(this.syncId, digest, ++seq, parts.join(''));
        parts = [];
        size = 0;
      }
    }
    if (seq < 0) return parts.join('');
    if (parts.length > 0) insert.run(this.syncId, digest, ++seq, parts.join(''));
    return '';
  }

  /**
   * Saves a refused plan as pending. Earlier pending (not yet approved) plans of the same guard are superseded: only
   * the newest refusal waits for a person. Saving the same digest again keeps the first record (a superseded one is pending again).
   */
  save(a: { digest: string; guard: string; message: string; createdAt: string; runId?: string; savedPlan: Iterable<string>; context: string }): ApprovalRecord {
    this.db.transaction(() => {
      this.db.prepare("UPDATE pending_approvals SET status = 'superseded' WHERE sync_id = ? AND status = 'pending' AND digest <> ?").run(this.syncId, a.digest);
      const known = this.db.prepare('SELECT 1 FROM pending_approvals WHERE sync_id = ? AND digest = ?').get(this.syncId, a.digest) !== undefined;
      // A digest saved before keeps its first plan (the same changes from the same inputs); only a new one is stored.
      const savedPlan = known ? '' : this.storePlan(a.digest, a.savedPlan);
      this.db
        .prepare(
          `INSERT INTO pending_approvals (sync_id, digest, guard, message, created_at, run_id, saved_plan, context, status)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending')
           ON CONFLICT (sync_id, digest) DO UPDATE SET status = 'pending' WHERE status = 'superseded'`,
        )
        .run(this.syncId, a.digest, a.guard, a.message, a.createdAt, a.runId ?? null, savedPlan, a.context);
    }).immediate();
    return this.get(a.digest)!;
  }

  /** One approval by digest (a unique prefix of at least `sha256:` + 6 hex characters works too). */
  get(digest: string): ApprovalRecord | undefined {
    const exact = this.db.prepare(`SELECT ${COLUMNS} FROM pending_approvals WHERE sync_id = ? AND digest = ?`).get(this.syncId, digest) as Row | undefined;
    if (exact) return toRecord(this, exact);
    if (!/^sha256:[0-9a-f]{6,}$/.test(digest)) return undefined;
    const rows = this.db.prepare(`SELECT ${COLUMNS} FROM pending_approvals WHERE sync_id = ? AND substr(digest, 1, ?) = ?`).all(this.syncId, digest.length, digest) as Row[];
    return rows.length === 1 ? toRecord(this, rows[0]!) : undefined;
  }

  /** Every approval, newest first. */
  list(): ApprovalRecord[] {
    return (this.db.prepare(`SELECT ${COLUMNS} FROM pending_approvals WHERE sync_id = ? ORDER BY created_at DESC, rowid DESC`).all(this.syncId) as Row[]).map((r) => toRecord(this, r));
  }

  /** Approvals waiting for a person or for a run (status pending or approved). */
  open(): ApprovalRecord[] {
    return this.list().filter((a) => a.status === 'pending' || a.status === 'approved');
  }

  /** Marks an approval approved (by an operator, `by` says who). False when it is not pending or approved. */
  approve(digest: string, at: string, by: string): boolean {
    const r = this.db.prepare("UPDATE pending_approvals SET status = 'approved', approved_at = ?, approved_by = ? WHERE sync_id = ? AND digest = ? AND status IN ('pending', 'approved')").run(at, by, this.syncId, digest);
    return r.changes === 1;
  }

  /** Marks an approval used by a run; false when it was used (or superseded) already: an approval is used once. */
  use(digest: string, at: string, runId: string, by: string): boolean {
    const r = this.db
      .prepare("UPDATE pending_approvals SET status = 'used', used_at = ?, used_by_run = ?, approved_at = coalesce(approved_at, ?), approved_by = coalesce(approved_by, ?) WHERE sync_id = ? AND digest = ? AND status IN ('pending', 'approved')")
      .run(at, runId, at, by, this.syncId, digest);
    return r.changes === 1;
  }
}
