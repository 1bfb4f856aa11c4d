/**
 * Delta reads (issue 31): a connector whose source can say what changed since a watermark (Graph `/users/delta`,
 * BambooHR's changed-since, LDAP `uSNChanged` / `modifyTimestamp`) keeps a snapshot of the raw records it mapped.
 * A delta run's desired state is that snapshot with the changes applied, mapped exactly as a full read would map
 * it; so guards, quarantine and the planner still see the whole directory. The run decides the mode (first read,
 * `full_read_interval`, a changed config or mapping, `--full-read`), the connector reads, and the run saves the
 * snapshot's changes and the new watermark in one transaction after the read (never in a dry run).
 */
import type { EntityKind } from '../../domain/entities.js';

/** One raw record as the connector read it, before mapping (JSON-serialisable: a JSON item, an LDAP entry). */
export interface SnapshotRecord {
  /** The connector's stable key of the record (Graph `id`, BambooHR `id`, LDAP `entryUUID` / `objectGUID`). */
  key: string;
  /** What the mapping needs to map it again, as read (a delta's partial record is merged onto it first). */
  raw: unknown;
}

/** How a source is read this run. */
export type ReadMode = 'full' | 'delta';

/** Given by the run to a delta-capable connector (absent: a plain full read that keeps no snapshot). */
export interface DeltaReadContext {
  mode: ReadMode;
  /** Why this mode, for the log and the run summary (`first read`, `full_read_interval 24h elapsed`, ...). */
  reason: string;
  /** The watermark saved with the snapshot (delta mode only). */
  watermark?: string | undefined;
  /** The snapshot's records of one entity (delta mode only), read once, in key order. */
  snapshot(entity: EntityKind): Iterable<SnapshotRecord>;
  /** Where the connector leaves what it saw. */
  writer: SnapshotWriter;
}

/** Collects one read's snapshot changes; the run commits them with the watermark in one transaction. */
export interface SnapshotWriter {
  /** The watermark, taken before the read began (called once per read; a fallback to full calls it again). */
  watermark(value: string): void;
  /** A record read: in a full read every record, in a delta read a new or changed one (already merged). */
  put(entity: EntityKind, record: SnapshotRecord): void;
  /** A record gone from the source (delta reads only). */
  remove(entity: EntityKind, key: string): void;
  /**
   * The delta could not be used (an expired token, a 410, `syncStateNotFound`): the connector reads everything
   * instead. What was put or removed so far is dropped, and the commit replaces the whole snapshot.
   */
  fellBackToFull(reason: string): void;
}
