/**
 * `orgsync sources preview`: the first records of a source, read by its own connector (real pagination, auth and
 * paging) and mapped by its own SourceCollector, with a trace of where each field's value came from. The connector
 * stops asking for rows, pages or entries once it has the records wanted. Nothing is written: no state DB, no
 * platform. Checks across records that need the whole source (department references) are `sources check`'s.
 */
import type { Config } from '../../config/schema.js';
import type { LdapSourceConfig, SourceConfig } from '../../config/sources.js';
import { resolveConfigPath } from '../../config/load.js';
import type { QuarantineEntry, SourceWarning } from '../../domain/desired.js';
import type { EntityKind } from '../../domain/entities.js';
import { buildDesiredState, type FieldGap, type MappingTrace, type SourceBatch, type TextProblem } from '../../desired/index.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import { secretOriginsOf, type ReadObserver, type SourceReadContext } from '../context.js';
import { readSource } from '../index.js';
import { LDAP_PROFILES } from '../ldap/profiles.js';

/** One read of a mapped field: the spec alternative (path, column, template) that gave the text. */
export interface FieldRead {
  field: string;
  from: string;
  text: string | TextProblem;
}

/** A raw record as the connector gave it, with every field read the mapping made of it. */
export interface ObservedRecord {
  location: string;
  raw: unknown;
  reads: FieldRead[];
}

/** What became of one record. */
export type RecordOutcome =
  | { kind: 'kept'; record: Record<string, unknown>; warnings: SourceWarning[] }
  | { kind: 'quarantined'; entry: QuarantineEntry }
  | { kind: 'excluded' };

/** The first records of one source and what the mapping made of them. */
export interface SourcePreviewRead {
  source: string;
  type: SourceConfig['type'];
  entity: EntityKind;
  /** False when the source has no such entity configured (nothing was read). */
  configured: boolean;
  records: (ObservedRecord & { outcome: RecordOutcome })[];
  /** Mapped fields of the entity that matched nothing in the records read (issue 45). */
  gaps: FieldGap[];
}

/** Collects the raw records of one entity and the field reads of each, up to `limit`. */
class PreviewObserver implements ReadObserver {
  readonly records: ObservedRecord[] = [];
  readonly trace: MappingTrace;

  constructor(
    private readonly entity: EntityKind,
    private readonly limit: number,
  ) {
    this.trace = {
      read: (entity, field, from, text) => {
        // The mapping reads a record's fields right after the connector handed it over: they are the last record's.
        if (entity === this.entity) this.records.at(-1)?.reads.push({ field, from, text });
      },
    };
  }

  wants(entity: EntityKind): boolean {
    return entity === this.entity;
  }

  record(entity: EntityKind, raw: unknown, location: string): boolean {
    if (entity !== this.entity) return false;
    this.records.push({ location, raw, reads: [] });
    return this.records.length >= this.limit;
  }
}

/** What previewSource needs besides the source. */
export interface PreviewOptions {
  config: Pick<Config, 'meta'> & { timezone?: string; sources?: readonly SourceConfig[] };
  entity: EntityKind;
  limit: number;
  env: Record<string, string | undefined>;
  logger: Logger;
  clock?: Clock;
  signal?: AbortSignal;
}

const ENTITY_CONFIGURED: Record<SourceConfig['type'], (s: SourceConfig, e: EntityKind) => boolean> = {
  csv: (s, e) => (s as unknown as Record<string, unknown>)[e] !== undefined,
  'hris-json': (s, e) => (s as unknown as Record<string, unknown>)[e] !== undefined,
  // LDAP always has members; departments from the OU tree when the config or the profile says so; positions when configured.
  ldap: (s, e) => {
    const ldap = s as LdapSourceConfig;
    if (e === 'members') return true;
    if (e === 'positions') return ldap.positions !== undefined;
    return ldap.departments === undefined ? LDAP_PROFILES[ldap.profile].departmentsFromOuTree : ldap.departments !== false;
  },
};

/** Reads the first `limit` records of `entity` from one source and maps them. */
export async function previewSource(source: SourceConfig, opts: PreviewOptions): Promise<SourcePreviewRead> {
  const base = { source: source.name, type: source.type, entity: opts.entity };
  if (!ENTITY_CONFIGURED[source.type](source, opts.entity)) return { ...base, configured: false, records: [], gaps: [] };
  const observer = new PreviewObserver(opts.entity, opts.limit);
  const ctx: SourceReadContext = {
    env: opts.env,
    logger: opts.logger,
    clock: opts.clock ?? systemClock,
    timezone: opts.config.timezone,
    signal: opts.signal,
    resolvePath: (p) => resolveConfigPath(opts.config, p),
    secretOrigin: secretOriginsOf(opts.config.meta.secret_origins, opts.config.sources?.indexOf(source) ?? -1),
    observe: observer,
    fieldCoverage: true,
  };
  const batch = await readSource(source, ctx);
  const outcomes = outcomesOf(batch, opts.entity);
  const outcomeOf = (r: ObservedRecord): RecordOutcome => {
    const id = r.reads.find((x) => x.field === 'id' && typeof x.text === 'string')?.text as string | undefined;
    return outcomes.get(keyOf(r.location, id?.trim())) ?? outcomes.get(keyOf(r.location, undefined)) ?? { kind: 'excluded' };
  };
  const gaps = (batch.fieldGaps ?? []).filter((g) => g.entity === opts.entity);
  return { ...base, configured: true, records: observer.records.map((r) => ({ ...r, outcome: outcomeOf(r) })), gaps };
}

/**
 * Records are told apart by location and source id: a location alone can repeat (an API's page URLs are shown
 * without their query values, so the first record of every page of an offset walk has the same one).
 */
const keyOf = (location: string, id: string | undefined) => `${location}\u0000${id ?? ''}`;

/**
 * What became of each record read, by location. Members go through the merge's own checks (names, contacts,
 * repeats among those read); department references are checked only when the departments were read whole (an LDAP
 * OU tree, or departments derived from the members' paths), since the first records cannot show the rest.
 */
function outcomesOf(batch: SourceBatch, entity: EntityKind): Map<string, RecordOutcome> {
  const out = new Map<string, RecordOutcome>();
  let kept: { source_id: string; origin?: { location: string } }[];
  let quarantine: QuarantineEntry[];
  let warnings: SourceWarning[] = [];
  if (entity === 'members') {
    const batches = [{ ...batch, provided: { ...batch.provided, departments: batch.departments.length > 0 } }];
    const state = buildDesiredState(batches);
    kept = [...state.members];
    quarantine = state.quarantine;
    warnings = state.warnings ?? [];
  } else {
    kept = entity === 'departments' ? batch.departments : batch.positions;
    quarantine = batch.quarantine;
  }
  for (const r of kept) {
    const at = r.origin?.location ?? '';
    const key = keyOf(at, r.source_id);
    if (!out.has(key)) out.set(key, { kind: 'kept', record: r as unknown as Record<string, unknown>, warnings: warnings.filter((w) => w.location === at && w.source_id === r.source_id) });
  }
  for (const q of quarantine) {
    const key = keyOf(q.location, q.source_id);
    if (q.entity === entity && !out.has(key)) out.set(key, { kind: 'quarantined', entry: q });
  }
  return out;
}
