/**
 * The record history's write (migration 081): a batch row carrying what its entries share (time, run, trigger,
 * approval), then its entries. Kept apart from record-history.ts so `forget` writes its entry the same way.
 */
import type Database from 'better-sqlite3';

/** What the entries of one batch share: kept once per batch (migration 081). */
export interface HistoryBatch {
  /** ms epoch. */
  at: number;
  runId: string;
  trigger: string;
  approvalDigest?: string | null;
}

/** An entry as written: the record, the operation, what it set and how it ended. */
export interface HistoryEntryRow {
  entity: string;
  source_id: string;
  platform_id: string | null;
  op: string;
  description: string;
  fields: string;
  result: string;
  message: string | null;
}

/**
 * Writes one batch of entries (in the caller's transaction: the batch row first, so its id orders with the entries'
 * sequence numbers).
 */
export function insertHistoryBatch(db: Database.Database, batch: HistoryBatch, entries: readonly HistoryEntryRow[]): void {
  const id = db.prepare('INSERT INTO history_batches (at, run_id, trigger, approval_digest) VALUES (?, ?, ?, ?)').run(batch.at, batch.runId, batch.trigger, batch.approvalDigest ?? null).lastInsertRowid;
  const insert = db.prepare('INSERT INTO record_history (batch, entity, source_id, platform_id, op, description, fields, result, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  // Positional values, not a spread copy of each entry: an import writes a million of them.
  for (const e of entries) insert.run(id, e.entity, e.source_id, e.platform_id, e.op, e.description, e.fields, e.result, e.message);
}
