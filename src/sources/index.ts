/**
 * sources/: one connector per source type. `readDesiredState` is the entry point of a run: it reads every
 * configured source (in config order), merges and validates them into one DesiredState with a quarantine report.
 * A source that cannot be read at all throws OrgsyncError('SOURCE_UNREADABLE'): never an empty or partial directory.
 */
import type { Config } from '../config/schema.js';
import type { SourceConfig } from '../config/sources.js';
import { resolveConfigPath } from '../config/load.js';
import type { DesiredState } from '../domain/desired.js';
import { buildDesiredState, listStage, type FieldGap, type SourceBatch } from '../desired/index.js';
import type { PhoneCache } from '../domain/phone-cache.js';
import type { MemberStage } from '../domain/desired.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { isOrgsyncError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { secretOriginsOf, sourceUnreadable, type SourceReadContext } from './context.js';
import type { DeltaProvider, SourceReadReport } from './delta/session.js';

export type { SourceReadContext } from './context.js';
export { DeltaSession, deltaCapable, type DeltaProvider, type SnapshotStorePort, type SourceReadReport, type SourceReads } from './delta/session.js';

/** What readDesiredState needs besides the config. */
export interface ReadSourcesOptions {
  env: Record<string, string | undefined>;
  logger: Logger;
  clock?: Clock;
  signal?: AbortSignal;
  /** Phone verdicts of earlier runs, looked up and added to while reading (runs with a state DB pass one). */
  phoneCache?: PhoneCache;
  /** Issue 31: the delta reads of a run with a state DB (a DeltaReadContext per delta-capable source). */
  delta?: DeltaProvider;
  /** Issue 42: where the members are staged (a run's state DB: src/mirror/member-stage.ts); absent: a list in the heap. */
  stage?: MemberStage;
  /** `sources check` (issue 45): note the mapped fields that matched nothing in any record read. */
  fieldCoverage?: boolean;
}

/**
 * Reads one source into its batch (not yet merged or cross-validated). Each connector is loaded when a source of its
 * type is read (issue 31): a CSV run never loads the LDAP client or the OAuth and JWT libraries, whose code and
 * tables cost every process tens of megabytes.
 */
export async function readSource(source: SourceConfig, ctx: SourceReadContext): Promise<SourceBatch> {
  try {
    switch (source.type) {
      case 'csv':
        return await (await import('./csv/read-csv.js')).readCsvSource(source, ctx);
      case 'hris-json':
        return await (await import('./hris-json/read-hris.js')).readHrisJsonSource(source, ctx);
      case 'ldap':
        return await (await import('./ldap/read-ldap.js')).readLdapSource(source, ctx);
    }
  } catch (err) {
    // A stopped run surfaces as the abort itself, for the caller's shutdown handling.
    if (isOrgsyncError(err) || ctx.signal?.aborted) throw err;
    throw sourceUnreadable(source.name, (err as Error)?.message ?? String(err), err);
  }
}

/** Counts of what one source yielded before the merge. */
export interface SourceSummary {
  name: string;
  type: SourceConfig['type'];
  departments: number;
  positions: number;
  members: number;
  quarantined: number;
  /** Records left out by include/exclude rules, per entity. */
  excluded: { departments: number; positions: number; members: number };
  /** A source read with a DeltaReadContext: its mode, why, and the records it read. */
  read?: SourceReadReport;
  /** Mapped fields that matched nothing in any record read (with ReadSourcesOptions.fieldCoverage). */
  field_gaps?: FieldGap[];
}

/** The desired state plus what each source yielded (for `orgsync sources check`). */
export interface SourcesReport {
  sources: SourceSummary[];
  state: DesiredState;
}

/** One step of `sources check` on one source: passed, not needed, or the one that failed (and stopped the check). */
export interface SourceCheckStep {
  source: string;
  type: SourceConfig['type'];
  step: string;
  result: 'ok' | 'skipped' | 'failed';
  detail: string;
}

/**
 * The access checks of `sources check` (issue 43), before the sources are read: for an LDAP source connect, TLS,
 * bind, a search of the members filter and a read of the watermark attribute, each reported to `report` as it passes.
 * The first failure is reported as `failed` and thrown (its details.step names the step). Other types have no steps
 * of their own: reading them is their check.
 */
export async function checkSources(config: Pick<Config, 'sources' | 'meta'> & { timezone?: string }, opts: ReadSourcesOptions, report: (s: SourceCheckStep) => void): Promise<void> {
  const ctx = readContext(config, opts);
  for (const [index, source] of config.sources.entries()) {
    if (source.type !== 'ldap') continue;
    const { checkLdapSource } = await import('./ldap/check.js');
    try {
      await checkLdapSource(source, { ...ctx, logger: opts.logger.child({ source: source.name }), secretOrigin: secretOriginsOf(config.meta.secret_origins, index) }, (o) => report({ source: source.name, type: source.type, ...o }));
    } catch (err) {
      const step = isOrgsyncError(err) ? err.details?.step : undefined;
      if (typeof step === 'string') report({ source: source.name, type: source.type, step, result: 'failed', detail: (err as Error).message });
      throw err;
    }
  }
}

function readContext(config: Pick<Config, 'sources' | 'meta'> & { timezone?: string }, opts: ReadSourcesOptions): SourceReadContext {
  return {
    env: opts.env,
    logger: opts.logger,
    clock: opts.clock ?? systemClock,
    timezone: config.timezone,
    signal: opts.signal,
    phoneCache: opts.phoneCache,
    resolvePath: (p) => resolveConfigPath(config, p),
    ...(opts.fieldCoverage ? { fieldCoverage: true } : {}),
  };
}

/** Reads every source and reports per source as well as the merged state. */
export async function readSourcesReport(config: Pick<Config, 'sources' | 'meta'> & { timezone?: string }, opts: ReadSourcesOptions): Promise<SourcesReport> {
  const ctx = readContext(config, opts);
  const batches: SourceBatch[] = [];
  const sources: SourceSummary[] = [];
  const stage = opts.stage ?? listStage();
  for (const [rank, source] of config.sources.entries()) {
    const log = opts.logger.child({ source: source.name });
    log.debug({ type: source.type }, 'reading source');
    const delta = opts.delta?.contextFor(source);
    const batch = await readSource(source, { ...ctx, logger: log, stage, rank, secretOrigin: secretOriginsOf(config.meta.secret_origins, rank), ...(delta ? { delta } : {}) });
    const read = opts.delta?.finished(source);
    const excluded = batch.excluded ?? { departments: 0, positions: 0, members: 0 };
    const summary: SourceSummary = {
      name: source.name,
      type: source.type,
      departments: batch.departments.length,
      positions: batch.positions.length,
      members: batch.memberCount,
      quarantined: batch.quarantine.length,
      excluded,
      ...(read ? { read } : {}),
      ...(batch.fieldGaps ? { field_gaps: batch.fieldGaps } : {}),
    };
    const how = read ? { mode: read.mode, reason: read.reason, records_read: read.recordsRead } : {};
    log.info({ departments: summary.departments, positions: summary.positions, members: summary.members, quarantined: summary.quarantined, excluded, ...how }, 'source read');
    batches.push(batch);
    sources.push(summary);
  }
  const state = buildDesiredState(batches);
  const excluded = sources.filter((s) => s.excluded.departments + s.excluded.positions + s.excluded.members > 0);
  if (excluded.length > 0) state.excluded = excluded.map((s) => ({ source: s.name, ...s.excluded }));
  if (state.quarantine.length > 0) opts.logger.warn({ quarantined: state.quarantine.length }, 'records quarantined');
  return { sources, state };
}

/** Reads every source, merges per entity by source id (per-field precedence), validates and quarantines. */
export async function readDesiredState(config: Pick<Config, 'sources' | 'meta'> & { timezone?: string }, opts: ReadSourcesOptions): Promise<DesiredState> {
  return (await readSourcesReport(config, opts)).state;
}
