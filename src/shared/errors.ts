import { redact } from './redact.js';

/**
 * The error catalogue. Every error a user can see has a stable code and an exit code; the CLI prints
 * `orgsync: <message>` on one line and exits with `exitCode`. docs/errors.md lists the same table (a test compares them).
 */
export const EXIT = {
  /** In sync / success. */
  OK: 0,
  /** The run failed. */
  FAILED: 1,
  /** Config or usage error. */
  USAGE: 2,
  /** Stopped by a guard (delete threshold, shrink guard, scope change). */
  GUARD: 3,
  /** Finished, but some records failed or were quarantined. */
  PARTIAL: 4,
  /** `plan --detailed-exitcode`: changes are pending. */
  DRIFT: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * Exit codes of a process stopped by a shutdown signal (128 + the signal's number, the shell's convention). SIGPIPE
 * is no signal Node delivers: it stands for the reader of the output going away (src/cli/output-watch.ts).
 */
export const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGPIPE: 141 } as const;

/** The exit code for a shutdown signal's abort reason (an Error with `signal: 'SIGTERM' | 'SIGINT' | 'SIGPIPE'`), or undefined. */
export function signalExitCode(reason: unknown): number | undefined {
  const sig = (reason as { signal?: unknown } | null | undefined)?.signal;
  return sig === 'SIGINT' || sig === 'SIGTERM' || sig === 'SIGPIPE' ? SIGNAL_EXIT[sig] : undefined;
}

/** Stable error codes with the exit code each maps to. */
export const ERROR_CODES = {
  CONFIG_INVALID: EXIT.USAGE,
  CONFIG_NOT_FOUND: EXIT.USAGE,
  SECRET_UNREADABLE: EXIT.USAGE,
  USAGE: EXIT.USAGE,
  SEED_INVALID: EXIT.USAGE,
  EMULATOR_MISSING: EXIT.FAILED,
  PLAN_REFUSED: EXIT.USAGE,
  SOURCE_UNREADABLE: EXIT.FAILED,
  SOURCE_INVALID: EXIT.USAGE,
  SOURCE_EMPTY: EXIT.FAILED,
  SAMPLE_INVALID: EXIT.USAGE,
  PLATFORM_ERROR: EXIT.FAILED,
  CREDENTIAL_REJECTED: EXIT.FAILED,
  STATE_LOCKED: EXIT.FAILED,
  STATE_FULL: EXIT.FAILED,
  STATE_ERROR: EXIT.FAILED,
  BACKUP_INVALID: EXIT.USAGE,
  FORGET_REFUSED: EXIT.USAGE,
  GUARD_TRIPPED: EXIT.GUARD,
  NOT_CONVERGED: EXIT.FAILED,
  NOT_FOUND: EXIT.FAILED,
  OUTPUT_UNWRITABLE: EXIT.FAILED,
  INTERNAL: EXIT.FAILED,
} as const satisfies Record<string, ExitCode>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * The key of `OrgsyncError.details` holding the error's message as the run history, /status and the logs keep it,
 * when the message itself names a value that may be personal (a selector the operator typed): issue 44.
 */
export const RECORDED_MESSAGE = 'recordedMessage';

/** The message of `err` as it may be recorded and logged (without personal data), on one line. */
export function recordedMessage(err: unknown): string {
  const recorded = isOrgsyncError(err) ? err.details?.[RECORDED_MESSAGE] : undefined;
  return typeof recorded === 'string' ? recorded : oneLine(err);
}

/** Base class of every error orgsync reports to a user. */
export class OrgsyncError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: ExitCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    // The message is what users, logs, /status and the run history see: never with a secret or a URL's query.
    super(redact(message), options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'OrgsyncError';
    this.code = code;
    this.exitCode = ERROR_CODES[code];
    this.details = options?.details;
  }
}

/** True when `err` is an OrgsyncError (also across module copies). */
export function isOrgsyncError(err: unknown): err is OrgsyncError {
  return err instanceof OrgsyncError || (typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'OrgsyncError');
}

/** The message of any thrown value, on one line. */
export function oneLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.replace(/\s*\n\s*/g, ' ').trim();
}
