/**
 * The source snapshot in the state DB (issue 31, delta reads): per delta-capable source, the raw records its last
 * read left (key, content hash, raw JSON) and one head row (the watermark, the hash of the source's config and
 * mapping, the time of the last full read). A delta run builds its desired state from these records plus the
 * changes the source reports since the watermark.
 *
 * A read stages what it saw in `source_snapshot_staging` as it goes (a full read every record, a delta read its
 * puts and removals), so that a million records are never held in memory twice; `commit` then swaps the staged rows
 * into `source_snapshot` and writes the head, for every source of the run, in ONE transaction. A read that fails
 * leaves staged rows behind, which the next read of that source clears first. Only an applying run that holds the
 * lease stages and commits (the dry-run seam, src/daemon/pipeline/writes.ts); read-only commands only load.
 */
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { EntityKind } from '../domain/entities.js';
import type { Migration } from './migrations/types.js';

/** 070: the source snapshots of delta reads (070-079: source snapshots). */
export const migration070: Migration = {
  version: 70,
  name: 'source-snapshot',
  sql: `
CREATE TABLE source_snapshot_head (
  source       TEXT PRIMARY KEY,
  watermark    TEXT NOT NULL,
  config_hash  TEXT NOT NULL,
  full_read_at INTEGER NOT NULL,
  read_at      INTEGER NOT NULL
) STRICT;
CREATE TABLE source_snapshot (
  source TEXT NOT NULL,
  entity TEXT NOT NULL,
  key    TEXT NOT NULL,
  hash   TEXT NOT NULL,
  raw    TEXT NOT NULL,
  PRIMARY KEY (source, entity, key)
) STRICT, WITHOUT ROWID;
CREATE TABLE source_snapshot_staging (
  source TEXT NOT NULL,
  entity TEXT NOT NULL,
  key    TEXT NOT NULL,
  hash   TEXT,
  raw    TEXT,
  PRIMARY KEY (source, entity, key)
) STRICT, WITHOUT ROWID;
`,
};

/** One raw record of a snapshot (the shape of src/sources/delta/types.ts's StoredRecord). */
export interface StoredRecord {
  key: string;
  raw: unknown;
}

/** The head row of one source's snapshot. */
export interface SnapshotHead {
  source: string;
  watermark: string;
  configHash: string;
  /** When the last full read was committed (clock ms). */
  fullReadAt: number;
  /** When the last read (full or delta) was committed (clock ms). */
  readAt: number;
}

/** One source's read, ready to be committed. */
export interface StagedRead {
  source: string;
  /** full: the staged rows replace the snapshot; delta: they are applied to it (a row without raw removes). */
  mode: 'full' | 'delta';
  watermark: string;
  configHash: string;
  /** The clock's ms of the commit's read. */
  at: number;
}

/** Rows read from the snapshot per query: the walk never holds a statement open between records. */
const CHUNK = 2_000;
/** Staged rows written per transaction during a read. */
const STAGE_BATCH = 1_000;

/** The content hash of a raw record's JSON (what the snapshot keeps beside it). */
export function contentHash(json: string): string {
  return createHash('sha256').update(json).digest('base64url').slice(0, 22);
}

/** Stages the records of one source's read (see the module comment). */
export class SnapshotStage {
  private batch: [EntityKind, string, string | null][] = [];

  constructor(
    private readonly db: Database.Database,
    readonly source: string,
  ) {
    this.clear();
  }

  /** A record seen (full read) or new or changed (delta read). */
  put(entity: EntityKind, record: StoredRecord): void {
    this.batch.push([entity, record.key, JSON.stringify(record.raw ?? null)]);
    if (this.batch.length >= STAGE_BATCH) this.flush();
  }

  /** A record gone (delta read). */
  remove(entity: EntityKind, key: string): void {
    this.batch.push([entity, key, null]);
    if (this.batch.length >= STAGE_BATCH) this.flush();
  }

  /** Drops everything staged for this source (a fresh read, or a delta that fell back to a full read). */
  clear(): void {
    this.batch = [];
    this.db.prepare('DELETE FROM source_snapshot_staging WHERE source = ?').run(this.source);
  }

  /** Writes the staged batch (the last put or remove of a key wins). */
  flush(): void {
    if (this.batch.length === 0) return;
    const rows = this.batch;
    this.batch = [];
    const ins = this.db.prepare('INSERT OR REPLACE INTO source_snapshot_staging (source, entity, key, hash, raw) VALUES (?, ?, ?, ?, ?)');
    this.db.transaction(() => {
      for (const [entity, key, raw] of rows) ins.run(this.source, entity, key, raw === null ? null : contentHash(raw), raw);
    })();
  }
}

/** Loads and commits the source snapshots of a state DB. */
export class SourceSnapshotStore {
  constructor(private readonly db: Database.Database) {}

  /** The head of `source`'s snapshot, if a read was ever committed. */
  head(source: string): SnapshotHead | undefined {
    const row = this.db.prepare('SELECT source, watermark, config_hash, full_read_at, read_at FROM source_snapshot_head WHERE source = ?').get(source) as
      | { source: string; watermark: string; config_hash: string; full_read_at: number; read_at: number }
      | undefined;
    return row && { source: row.source, watermark: row.watermark, configHash: row.config_hash, fullReadAt: row.full_read_at, readAt: row.read_at };
  }

  /** The snapshot's records of one entity, in key order, read a chunk at a time (no statement stays open). */
  *records(source: string, entity: EntityKind): Generator<StoredRecord> {
    const first = this.db.prepare('SELECT key, raw FROM source_snapshot WHERE source = ? AND entity = ? ORDER BY key LIMIT ?').raw();
    const next = this.db.prepare('SELECT key, raw FROM source_snapshot WHERE source = ? AND entity = ? AND key > ? ORDER BY key LIMIT ?').raw();
    let rows = first.all(source, entity, CHUNK) as [string, string][];
    while (rows.length > 0) {
      for (const [key, raw] of rows) yield { key, raw: JSON.parse(raw) as unknown };
      if (rows.length < CHUNK) return;
      rows = next.all(source, entity, rows[rows.length - 1]![0], CHUNK) as [string, string][];
    }
  }

  /** How many records the snapshot of `source` holds. */
  count(source: string): number {
    return this.db.prepare('SELECT count(*) FROM source_snapshot WHERE source = ?').pluck().get(source) as number;
  }

  /** Starts staging a read of `source` (clearing what an earlier, unfinished read staged). */
  stage(source: string): SnapshotStage {
    return new SnapshotStage(this.db, source);
  }

  /**
   * Commits the staged reads in one transaction: each full read replaces its source's snapshot, each delta read is
   * applied to it, every head is written; snapshots of sources no longer configured (not in `configured`) go.
   */
  commit(reads: readonly StagedRead[], configured: readonly string[]): void {
    const db = this.db;
    const s = {
      dropAll: db.prepare('DELETE FROM source_snapshot WHERE source = ?'),
      copyAll: db.prepare('INSERT INTO source_snapshot (source, entity, key, hash, raw) SELECT source, entity, key, hash, raw FROM source_snapshot_staging WHERE source = ? AND raw IS NOT NULL'),
      dropRemoved: db.prepare(
        'DELETE FROM source_snapshot WHERE source = @source AND (entity, key) IN (SELECT entity, key FROM source_snapshot_staging WHERE source = @source AND raw IS NULL)',
      ),
      upsert: db.prepare(
        'INSERT OR REPLACE INTO source_snapshot (source, entity, key, hash, raw) SELECT source, entity, key, hash, raw FROM source_snapshot_staging WHERE source = ? AND raw IS NOT NULL',
      ),
      unstage: db.prepare('DELETE FROM source_snapshot_staging WHERE source = ?'),
      head: db.prepare(
        `INSERT INTO source_snapshot_head (source, watermark, config_hash, full_read_at, read_at) VALUES (@source, @watermark, @configHash, @at, @at)
         ON CONFLICT (source) DO UPDATE SET watermark = excluded.watermark, config_hash = excluded.config_hash, read_at = excluded.read_at,
           full_read_at = CASE WHEN @mode = 'full' THEN excluded.full_read_at ELSE source_snapshot_head.full_read_at END`,
      ),
    };
    db.transaction(() => {
      for (const r of reads) {
        if (r.mode === 'full') {
          s.dropAll.run(r.source);
          s.copyAll.run(r.source);
        } else {
          s.dropRemoved.run({ source: r.source });
          s.upsert.run(r.source);
        }
        s.unstage.run(r.source);
        s.head.run({ source: r.source, watermark: r.watermark, configHash: r.configHash, at: r.at, mode: r.mode });
      }
      const list = JSON.stringify(configured);
      db.prepare('DELETE FROM source_snapshot WHERE source NOT IN (SELECT value FROM json_each(?))').run(list);
      db.prepare('DELETE FROM source_snapshot_head WHERE source NOT IN (SELECT value FROM json_each(?))').run(list);
      db.prepare('DELETE FROM source_snapshot_staging WHERE source NOT IN (SELECT value FROM json_each(?))').run(list);
    })();
  }
}
