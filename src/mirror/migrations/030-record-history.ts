import type { Migration } from './types.js';

/**
 * Migration 030 (issue 22): the history of every write orgsync made to a record. One row per write attempt that
 * reached the platform: the record (entity, source id, platform id), the run and its trigger, the operation, the
 * fields changed (JSON `{field: {old, new}}`, contact values masked), the result, and the approval digest when a
 * guard was approved (null otherwise). Pruned after `state.history_days`.
 */
export const migration030: Migration = {
  version: 30,
  name: 'record-history',
  sql: `
CREATE TABLE record_history (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,
  at              INTEGER NOT NULL,
  entity          TEXT NOT NULL,
  source_id       TEXT NOT NULL,
  platform_id     TEXT,
  run_id          TEXT NOT NULL,
  trigger         TEXT NOT NULL,
  op              TEXT NOT NULL,
  description     TEXT NOT NULL,
  fields          TEXT NOT NULL,
  result          TEXT NOT NULL,
  message         TEXT,
  approval_digest TEXT
) STRICT;
CREATE INDEX record_history_by_source ON record_history (source_id, at);
CREATE INDEX record_history_by_platform ON record_history (platform_id, at);
CREATE INDEX record_history_by_time ON record_history (at);
`,
};
