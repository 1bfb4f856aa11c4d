import type { Migration } from './types.js';

/**
 * Pending approvals (issue 20): a plan a guard refused, saved signed (the saved-plan document of `plan --out`) with
 * the report context, under a short digest. `status`: pending -> approved (`approvals approve`) -> used (one run
 * applied it) | superseded (a later refusal replaced it).
 */
export const APPROVALS_SQL = `
CREATE TABLE IF NOT EXISTS pending_approvals (
  sync_id     TEXT NOT NULL,
  digest      TEXT NOT NULL,
  guard       TEXT NOT NULL,
  message     TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  run_id      TEXT,
  saved_plan  TEXT NOT NULL,
  context     TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'used', 'superseded')),
  approved_at TEXT,
  approved_by TEXT,
  used_at     TEXT,
  used_by_run TEXT,
  PRIMARY KEY (sync_id, digest)
) STRICT;
CREATE INDEX IF NOT EXISTS pending_approvals_by_time ON pending_approvals (sync_id, created_at);
`;

export const migration023: Migration = { version: 23, name: 'pending-approvals', sql: APPROVALS_SQL };
