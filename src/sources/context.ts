/** What a connector may use of the outside world, and the one error for a source that cannot be read. */
import type { Clock } from '../shared/clock.js';
import type { PhoneCache } from '../domain/phone-cache.js';
import type { Logger } from '../shared/logger.js';
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
}

/** A source that cannot be read at all: the run fails (never an empty or partial directory). */
export function sourceUnreadable(source: string, detail: string, cause?: unknown): OrgsyncError {
  return new OrgsyncError('SOURCE_UNREADABLE', `source "${source}": ${detail}`, cause === undefined ? undefined : { cause });
}

/** A source file that is malformed input (exit 2): the message names the file, line and column. */
export function sourceInvalid(source: string, detail: string, cause?: unknown): OrgsyncError {
  return new OrgsyncError('SOURCE_INVALID', `source "${source}": ${detail}`, cause === undefined ? undefined : { cause });
}

/** Throws the signal's reason when the run was asked to stop. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new OrgsyncError('SOURCE_UNREADABLE', 'reading sources was aborted');
}
