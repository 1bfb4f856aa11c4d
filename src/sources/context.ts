/** What a connector may use of the outside world, and the one error for a source that cannot be read. */
import type { Clock } from '../shared/clock.js';
import type { PhoneCache } from '../domain/phone-cache.js';
import type { MemberStage } from '../domain/desired.js';
import type { EntityKind } from '../domain/entities.js';
import type { MappingTrace } from '../desired/index.js';
import type { Logger } from '../shared/logger.js';
import type { DeltaReadContext } from './delta/types.js';
import { OrgsyncError } from '../shared/errors.js';

/** Passed to every connector. */
export interface SourceReadContext {
  env: Record<string, string | undefined>;
  logger: Logger;
  clock: Clock;
  /** The config's `timezone:` (IANA), in which dates without an offset are read. */
  timezone?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Phone verdicts of earlier runs (src/domain/phone-cache.ts); absent for readers without a state DB. */
  phoneCache?: PhoneCache | undefined;
  /** Resolves a path from the config against the config file's folder. */
  resolvePath(path: string): string;
  /**
   * Where a secret setting of this source was read (`bind_password`, `auth.token`): `$LDAP_PASSWORD`, `file
   * /run/secrets/pw (bind_password_file)` or `the config file`; undefined when not known. For errors that name it.
   */
  secretOrigin?: ((key: string) => string | undefined) | undefined;
  /** Set by `sources check` and `sources preview`: note the mapped fields that matched nothing in any record (issue 45). */
  fieldCoverage?: boolean | undefined;
  /** Set by `sources preview` only: sees each raw record and may end the read early. */
  observe?: ReadObserver | undefined;
  /** Issue 31: given by the run to a delta-capable source (how to read it, its snapshot, where to leave what it saw). */
  delta?: DeltaReadContext | undefined;
  /** Issue 42: where the source's members are staged (shared by the sources of one read), and its place in config order. */
  stage?: MemberStage | undefined;
  rank?: number | undefined;
}

/**
 * A reader of the first records of a source (`sources preview`): the connector reads only the entities it wants,
 * tells it each raw record before mapping it, and stops asking for rows, pages or entries once it has enough.
 */
export interface ReadObserver {
  /** Whether to read `entity` at all (a connector still reads what the wanted entity needs, such as an OU tree). */
  wants(entity: EntityKind): boolean;
  /** Given to the source's SourceCollector (desired/mapping.ts). */
  trace: MappingTrace;
  /** A raw record of a wanted entity, before it is mapped; true: it is the last one wanted, stop after mapping it. */
  record(entity: EntityKind, raw: unknown, location: string): boolean;
}

/** A secret setting as an error names it: `bind_password (read from $LDAP_PASSWORD)`. */
export function settingWithOrigin(key: string, ctx: Pick<SourceReadContext, 'secretOrigin'>): string {
  const from = ctx.secretOrigin?.(key);
  return from === undefined ? key : `${key} (read from ${from})`;
}

/** Looks up where the secrets of the source at `index` of the config were read. */
export function secretOriginsOf(origins: Readonly<Record<string, string>> | undefined, index: number): (key: string) => string | undefined {
  return (key) => origins?.[`sources[${index}].${key}`];
}

/** A source that cannot be read at all: the run fails (never an empty or partial directory). */
export function sourceUnreadable(source: string, detail: string, cause?: unknown, details?: Record<string, unknown>): OrgsyncError {
  return new OrgsyncError('SOURCE_UNREADABLE', `source "${source}": ${detail}`, { ...(cause === undefined ? {} : { cause }), ...(details === undefined ? {} : { details }) });
}

/** A source file that is malformed input (exit 2): the message names the file, line and column. */
export function sourceInvalid(source: string, detail: string, cause?: unknown): OrgsyncError {
  return new OrgsyncError('SOURCE_INVALID', `source "${source}": ${detail}`, cause === undefined ? undefined : { cause });
}

/** Throws the signal's reason when the run was asked to stop. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new OrgsyncError('SOURCE_UNREADABLE', 'reading sources was aborted');
}
