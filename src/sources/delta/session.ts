/**
 * One run's delta reads: for each delta-capable source it decides the mode (read-mode.ts), hands the connector a
 * DeltaReadContext over the state DB's snapshot, counts what the connector read, and (in a run that keeps
 * snapshots) stages what it saw and commits every source's snapshot and watermark in one transaction after the
 * read. The state DB is reached through SnapshotStorePort (src/mirror/source-snapshot.ts implements it), so sources/
 * never imports the mirror.
 */
import type { SourceConfig } from '../../config/sources.js';
import type { EntityKind } from '../../domain/entities.js';
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import { sourceConfigHash } from './config-hash.js';
import { decideReadMode } from './read-mode.js';
import type { DeltaReadContext, ReadMode, SnapshotRecord, SnapshotWriter } from './types.js';

/** How one source was read, for the log and the run summary. */
export interface SourceReadReport {
  source: string;
  mode: ReadMode;
  reason: string;
  /** Records the source sent: every record of a full read; the new, changed and removed ones of a delta read. */
  recordsRead: number;
}

/** Hands a DeltaReadContext to each delta-capable source of one read (readSourcesReport's per-source provider). */
export interface DeltaProvider {
  /** The context of `source`; undefined: the source is read in full and keeps no snapshot (CSV, no delta set). */
  contextFor(source: SourceConfig): DeltaReadContext | undefined;
  /** After `source` was read: how (undefined when contextFor gave it none). */
  finished(source: SourceConfig): SourceReadReport | undefined;
}

/**
 * What an applying run lets its read do with the snapshots, handed to the read by the run's writes (the dry-run
 * seam): `keep` false (a dry run, plan, explain) reads by delta when a snapshot exists but writes nothing.
 */
export interface SourceReads {
  readonly keep: boolean;
  /** Filled by the read: one report per source read with a DeltaReadContext. */
  reports: SourceReadReport[];
  /** Set by the read when `keep`: commits the staged snapshots and watermarks in one transaction. */
  commit?: (() => void) | undefined;
}

/** A read of one source staged for the commit. */
export interface StagedSourceRead {
  source: string;
  mode: ReadMode;
  watermark: string;
  configHash: string;
  at: number;
}

/** The state DB's side of the snapshots. */
export interface SnapshotStorePort {
  head(source: string): { watermark: string; configHash: string; fullReadAt: number; readAt: number } | undefined;
  records(source: string, entity: EntityKind): Iterable<SnapshotRecord>;
  stage(source: string): { put(entity: EntityKind, record: SnapshotRecord): void; remove(entity: EntityKind, key: string): void; clear(): void; flush(): void };
  commit(reads: readonly StagedSourceRead[], configured: readonly string[]): void;
}

/** Whether a source's connector reads by delta with its config (CSV never does). */
export function deltaCapable(source: SourceConfig): source is Exclude<SourceConfig, { type: 'csv' }> {
  switch (source.type) {
    case 'hris-json':
      return source.members?.delta !== undefined && source.members.delta !== false && source.members.url !== undefined;
    case 'ldap':
      // The LDAP source's `delta` key: read by delta unless set to false.
      return source.delta;
    case 'csv':
      return false;
  }
}

/** The writer of one source's read: counts, and stages when the run keeps snapshots. */
class SourceRead implements SnapshotWriter {
  recordsRead = 0;
  watermarkValue: string | undefined;

  constructor(
    readonly source: string,
    public mode: ReadMode,
    public reason: string,
    readonly configHash: string,
    private readonly stage: ReturnType<SnapshotStorePort['stage']> | undefined,
    private readonly logger: Logger,
  ) {}

  watermark(value: string): void {
    this.watermarkValue = value;
  }

  put(entity: EntityKind, record: SnapshotRecord): void {
    this.recordsRead += 1;
    this.stage?.put(entity, record);
  }

  remove(entity: EntityKind, key: string): void {
    this.recordsRead += 1;
    this.stage?.remove(entity, key);
  }

  fellBackToFull(reason: string): void {
    this.logger.warn({ source: this.source, reason }, 'delta read not possible: reading the source in full');
    this.mode = 'full';
    this.reason = `fell back to a full read: ${reason}`;
    this.recordsRead = 0;
    this.watermarkValue = undefined;
    this.stage?.clear();
  }

  finish(): SourceReadReport {
    this.stage?.flush();
    return { source: this.source, mode: this.mode, reason: this.reason, recordsRead: this.recordsRead };
  }
}

/** What a DeltaSession is built from. */
export interface DeltaSessionOptions {
  store: SnapshotStorePort;
  /** Every configured source (snapshots of others are dropped at the commit). */
  sources: readonly SourceConfig[];
  timezone: string | undefined;
  clock: Clock;
  logger: Logger;
  /** `sync --full-read`. */
  fullRead: boolean;
  /** Stage and commit snapshots (an applying run that may write the state DB). */
  keep: boolean;
}

/** One run's delta reads (see the module comment). */
export class DeltaSession implements DeltaProvider {
  private readonly reads = new Map<string, SourceRead>();

  constructor(private readonly o: DeltaSessionOptions) {}

  contextFor(source: SourceConfig): DeltaReadContext | undefined {
    if (!deltaCapable(source)) return undefined;
    const { store, clock } = this.o;
    const configHash = sourceConfigHash(source, this.o.timezone);
    const head = store.head(source.name);
    const intervalMs = source.full_read_interval;
    const decision = decideReadMode({ head, configHash, now: clock.now(), fullReadIntervalMs: intervalMs, fullRead: this.o.fullRead });
    const read = new SourceRead(source.name, decision.mode, decision.reason, configHash, this.o.keep ? store.stage(source.name) : undefined, this.o.logger);
    this.reads.set(source.name, read);
    return {
      mode: decision.mode,
      reason: decision.reason,
      watermark: decision.mode === 'delta' ? head!.watermark : undefined,
      snapshot: (entity) => store.records(source.name, entity),
      writer: read,
    };
  }

  finished(source: SourceConfig): SourceReadReport | undefined {
    return this.reads.get(source.name)?.finish();
  }

  /** The reads to commit: those that left a watermark (a connector that set none keeps the old snapshot). */
  staged(at: number): StagedSourceRead[] {
    const out: StagedSourceRead[] = [];
    for (const r of this.reads.values()) {
      if (r.watermarkValue === undefined) {
        this.o.logger.warn({ source: r.source }, 'the read left no watermark: its snapshot is not saved');
        continue;
      }
      out.push({ source: r.source, mode: r.mode, watermark: r.watermarkValue, configHash: r.configHash, at });
    }
    return out;
  }

  /** Commits every staged read in one transaction (only when the session keeps snapshots). */
  commit(): void {
    if (!this.o.keep) return;
    const staged = this.staged(this.o.clock.now());
    this.o.store.commit(
      staged,
      this.o.sources.filter(deltaCapable).map((s) => s.name),
    );
    this.o.logger.debug({ sources: staged.length }, 'source snapshots saved');
  }
}
