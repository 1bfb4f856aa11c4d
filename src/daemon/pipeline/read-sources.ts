/** The read stage: the sources read and turned into the desired state (mapping, merge, validation, quarantine). */
import type Database from 'better-sqlite3';
import type { Config } from '../../config/schema.js';
import type { DesiredState } from '../../domain/index.js';
import { SourceSnapshotStore } from '../../mirror/source-snapshot.js';
import { systemClock } from '../../shared/clock.js';
import { DeltaSession, readSourcesReport, type ReadSourcesOptions, type SourceReads } from '../../sources/index.js';
import type { RunOnceDeps } from './run-state.js';
import type { RunContext } from './start.js';

/** Reads the sources into the desired state (stopped by the run's shutdown signal). */
export function readSources(deps: Pick<RunOnceDeps, 'readDesiredState' | 'signal'>): Promise<DesiredState> {
  return deps.readDesiredState(deps.signal);
}

/**
 * The read stage of a run (issue 31): an applying run's writes let the read keep source snapshots (a dry run's
 * only read them; a plan keeps none), and the snapshots and watermarks are saved right after the read, before the
 * plan, the guards and the run record: they describe the source as read, whatever the run then does with it (a
 * guard that refuses a delta's removals refuses them again on the next run, which starts from this snapshot).
 */
export async function readSourcesOfRun(run: RunContext): Promise<{ desired: DesiredState; reads: SourceReads }> {
  const applying = run.options.mode === 'apply';
  const reads: SourceReads = applying ? run.writes.sourceReads() : { keep: false, reports: [] };
  const desired = await run.deps.readDesiredState(run.deps.signal, reads);
  if (applying) run.writes.commitSourceSnapshots(reads);
  return { desired, reads };
}

/** What readWithSnapshots needs besides the sources' own options. */
export interface SnapshotReadOptions {
  /** The state DB holding the source snapshots (a read-only command's is its private in-memory copy). */
  db: Database.Database;
  /** `sync --full-read`. */
  fullRead: boolean;
  /** Whether the run may write the state DB now (it holds the lease; asked again at the commit). */
  mayWrite(): boolean;
  /** The run's SourceReads (absent: a read outside a run, without snapshots). */
  reads: SourceReads | undefined;
}

/**
 * Reads the sources with the state DB's source snapshots (issue 31): each delta-capable source gets a
 * DeltaReadContext, `reads` gets how each was read and, when the run keeps snapshots, their commit.
 */
export async function readWithSnapshots(config: Pick<Config, 'sources' | 'meta' | 'timezone'>, opts: ReadSourcesOptions, s: SnapshotReadOptions): Promise<DesiredState> {
  const reads = s.reads;
  if (!reads) return (await readSourcesReport(config, opts)).state;
  const keep = reads.keep && s.mayWrite();
  const session = new DeltaSession({ store: new SourceSnapshotStore(s.db), sources: config.sources, timezone: config.timezone, clock: opts.clock ?? systemClock, logger: opts.logger, fullRead: s.fullRead, keep });
  const report = await readSourcesReport(config, { ...opts, delta: session });
  for (const source of report.sources) if (source.read) reads.reports.push(source.read);
  if (keep) {
    reads.commit = () => {
      if (s.mayWrite()) session.commit();
      else opts.logger.warn({}, 'the state DB lease was lost: the source snapshots are not saved');
    };
  }
  return report.state;
}
