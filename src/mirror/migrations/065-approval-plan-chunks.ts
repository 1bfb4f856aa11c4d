import type { Migration } from './types.js';

/**
 * Issue 31: a refused plan of a million changes is longer than a string can be, so it cannot be one TEXT value of
 * pending_approvals. A saved plan longer than APPROVAL_INLINE_MAX is stored here in numbered chunks (each whole JSON
 * values joined, so a person's value is never split between two), and its pending_approvals.saved_plan is ''.
 * Smaller plans stay in saved_plan as before.
 */
export const APPROVAL_CHUNKS_SQL = `
CREATE TABLE IF NOT EXISTS pending_approval_chunks (
  sync_id TEXT NOT NULL,
  digest  TEXT NOT NULL,
  seq     INTEGER NOT NULL,
  chunk   TEXT NOT NULL,
  PRIMARY KEY (sync_id, digest, seq)
) STRICT;
`;

/** Migration 065: numbered after every migration of earlier releases, so a state DB of any of them gets it. */
export const migration065: Migration = { version: 65, name: 'approval-plan-chunks', sql: APPROVAL_CHUNKS_SQL };
