import type { Migration } from './types.js';

/**
 * Per-entity sync state of the mirror. `watermark` advances only when a walk completes, so an interrupted refresh
 * resumes from the last completed one. `walk_id` counts walks (the id stamped into seen_walk), `walk_*` describe the
 * latest walk begun (completed or not).
 */
export const migration002: Migration = {
  version: 2,
  name: 'mirror-sync-state',
  sql: `
CREATE TABLE mirror_sync_state (
  entity TEXT PRIMARY KEY CHECK (entity IN ('departments', 'members', 'positions')),
  watermark TEXT,
  last_full_walk_at TEXT,
  last_incremental_at TEXT,
  walk_id INTEGER NOT NULL DEFAULT 0,
  walk_kind TEXT,
  walk_started_at TEXT,
  walk_completed_at TEXT
) STRICT;
INSERT INTO mirror_sync_state (entity) VALUES ('departments'), ('members'), ('positions');
`,
};
