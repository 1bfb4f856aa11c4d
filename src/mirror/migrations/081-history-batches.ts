import type { Migration } from './types.js';

/**
 * Migration 081 (issue 42): what a batch of recorded writes shares (its time, run, trigger and approval) is kept once,
 * in `history_batches`, and each entry names its batch. Every entry of an initial import carried the same run id (36
 * bytes), trigger and time, and an index over the time: about 80 of the 1,073 bytes a member took at a million. The
 * entries keep their sequence numbers; rows written before keep their fields as they were ({old, new} or [old, new]).
 */
export const migration081: Migration = {
  version: 81,
  name: 'history-batches',
  sql: `
CREATE TABLE history_batches (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  at              INTEGER NOT NULL,
  run_id          TEXT NOT NULL,
  trigger         TEXT NOT NULL,
  approval_digest TEXT
) STRICT;
INSERT INTO history_batches (at, run_id, trigger, approval_digest)
  SELECT at, run_id, trigger, approval_digest FROM record_history GROUP BY at, run_id, trigger, approval_digest ORDER BY min(seq);
CREATE INDEX history_batches_by_time ON history_batches (at);
CREATE TABLE record_history_081 (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  batch       INTEGER NOT NULL,
  entity      TEXT NOT NULL,
  source_id   TEXT NOT NULL,
  platform_id TEXT,
  op          TEXT NOT NULL,
  description TEXT NOT NULL,
  fields      TEXT NOT NULL,
  result      TEXT NOT NULL,
  message     TEXT
) STRICT;
INSERT INTO record_history_081 (seq, batch, entity, source_id, platform_id, op, description, fields, result, message)
  SELECT h.seq, b.id, h.entity, h.source_id, h.platform_id, h.op, h.description, h.fields, h.result, h.message
  FROM record_history h JOIN history_batches b ON b.at = h.at AND b.run_id = h.run_id AND b.trigger = h.trigger AND b.approval_digest IS h.approval_digest
  ORDER BY h.seq;
DROP TABLE record_history;
ALTER TABLE record_history_081 RENAME TO record_history;
CREATE INDEX record_history_by_source ON record_history (source_id);
CREATE INDEX record_history_by_platform ON record_history (platform_id);
CREATE INDEX record_history_by_batch ON record_history (batch);
`,
};
