import type { Writable } from 'node:stream';

/** What a command may touch of the outside world. The CLI is the only layer that reads process.env and argv. */
export interface CliContext {
  env: Record<string, string | undefined>;
  stdout: Writable;
  stderr: Writable;
  /** Resolves when the process is asked to stop (SIGTERM/SIGINT). */
  shutdownSignal: AbortSignal;
  /** Whether stdout is a terminal (progress lines, pretty logs). */
  isTTY: boolean;
}

/** A command's action result: the exit code (undefined = 0). */
export type CommandResult = number | void | ServiceStopped;

/**
 * What a service command (the emulator) returns when SIGTERM/SIGINT was its ordinary way to end: it exits with
 * `exitCode`, not the 130/143 that a sync or daemon stopped in mid-work reports.
 */
export interface ServiceStopped {
  exitCode: number;
  stoppedBySignalAsPlanned: true;
}
