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
export type CommandResult = number | void;
