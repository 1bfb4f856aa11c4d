/**
 * The pending approvals of one sync id (issue 20), next to the trust state: plans a guard refused, saved signed
 * under a short digest, approved by config (`sync.approve`) or by `orgsync approvals approve`, used once.
 */
import type Database from 'better-sqlite3';
import { APPROVALS_SQL } from './migrations/023-approvals.js';

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
  /** The signed saved-plan document (JSON text, as `plan --out` writes it). */
  savedPlan: string;
  /** The report context (JSON text: departments, member departments, quarantine). */
  context: string;
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
  saved_plan: string;
  context: string;
  status: ApprovalStatus;
  approved_at: string | null;
  approved_by: string | null;
  used_at: string | null;
  used_by_run: string | null;
}

const toRecord = (r: Row): ApprovalRecord => ({
  digest: r.digest,
  guard: r.guard,
  message: r.message,
  createdAt: r.created_at,
  runId: r.run_id,
  savedPlan: r.saved_plan,
  context: r.context,
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
    if (!db.readonly) db.exec(APPROVALS_SQL);
    this.db = db;
  }

  /**
   * Saves a refused plan as pending. Earlier pending (not yet approved) plans of the same guard are superseded: only
   * the newest refusal waits for a person. Saving the same digest again keeps the first record (a superseded one is pending again).
   */
  save(a: { digest: string; guard: string; message: string; createdAt: string; runId?: string; savedPlan: string; context: string }): ApprovalRecord {
    this.db.transaction(() => {
      this.db.prepare("UPDATE pending_approvals SET status = 'superseded' WHERE sync_id = ? AND status = 'pending' AND digest <> ?").run(this.syncId, a.digest);
      this.db
        .prepare(
          `INSERT INTO pending_approvals (sync_id, digest, guard, message, created_at, run_id, saved_plan, context, status)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending')
           ON CONFLICT (sync_id, digest) DO UPDATE SET status = 'pending' WHERE status = 'superseded'`,
        )
        .run(this.syncId, a.digest, a.guard, a.message, a.createdAt, a.runId ?? null, a.savedPlan, a.context);
    }).immediate();
    return this.get(a.digest)!;
  }

  /** One approval by digest (a unique prefix of at least `sha256:` + 6 hex characters works too). */
  get(digest: string): ApprovalRecord | undefined {
    const exact = this.db.prepare('SELECT * FROM pending_approvals WHERE sync_id = ? AND digest = ?').get(this.syncId, digest) as Row | undefined;
    if (exact) return toRecord(exact);
    if (!/^sha256:[0-9a-f]{6,}$/.test(digest)) return undefined;
    const rows = this.db.prepare("SELECT * FROM pending_approvals WHERE sync_id = ? AND substr(digest, 1, ?) = ?").all(this.syncId, digest.length, digest) as Row[];
    return rows.length === 1 ? toRecord(rows[0]!) : undefined;
  }

  /** Every approval, newest first. */
  list(): ApprovalRecord[] {
    return (this.db.prepare('SELECT * FROM pending_approvals WHERE sync_id = ? ORDER BY created_at DESC, rowid DESC').all(this.syncId) as Row[]).map(toRecord);
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
