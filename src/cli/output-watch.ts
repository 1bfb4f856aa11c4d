import type { Writable } from 'node:stream';
import { oneLine, OrgsyncError } from '../shared/errors.js';

/**
 * What the CLI does when its output can no longer be written. A closed pipe (`orgsync plan | head -1`: the reader
 * read what it wanted and went away) is the ordinary end of a pipeline, not an error: nothing more is written, the
 * command is asked to stop as on SIGTERM (a sync starts no new write and records what is known), no stack trace,
 * and the process exits 0 (141, 128 + SIGPIPE, when the stop cut work short; see main). Any other write failure
 * (ENOSPC on a redirected file, EIO on a lost terminal) leaves the output incomplete: the command stops too, and the
 * CLI exits 1 saying so (OUTPUT_UNWRITABLE).
 */

/** Whether a write error says the reader went away: EPIPE, or a write after the stream was closed for it. */
export function isClosedPipe(err: unknown): boolean {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
}

/** The stop reason of a closed pipe: `signal` makes it a shutdown reason main knows (signalExitCode). */
export function closedPipeReason(stream: string): Error & { signal: 'SIGPIPE' } {
  return Object.assign(new Error(`the reader of ${stream} went away (closed pipe)`), { signal: 'SIGPIPE' as const });
}

/** The error of an output that could not be written for another reason than a closed pipe. */
export function outputUnwritable(stream: 'stdout' | 'stderr', err: unknown): OrgsyncError {
  return new OrgsyncError('OUTPUT_UNWRITABLE', `cannot write the output to ${stream}: ${oneLine(err)}; what was written is incomplete`);
}

export interface OutputFailure {
  stream: 'stdout' | 'stderr';
  error: Error;
}

/** Watches stdout and stderr of one CLI call for write errors (see the module comment). */
export class OutputWatch {
  private readonly controller = new AbortController();
  private readonly closed = new Set<Writable>();
  private readonly listeners: [Writable, (err: Error) => void][] = [];
  /** The first write failure other than a closed pipe, if any. */
  failure: OutputFailure | undefined;

  constructor(streams: { stdout: Writable; stderr: Writable }) {
    for (const name of ['stdout', 'stderr'] as const) {
      const stream = streams[name];
      const onError = (err: Error) => this.failed(name, stream, err);
      stream.on('error', onError);
      this.listeners.push([stream, onError]);
    }
  }

  /** Aborted at the first write failure of either stream. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether `stream` still takes output: once it failed, what the command writes to it is dropped. */
  writable(stream: Writable): boolean {
    return !this.closed.has(stream) && !stream.destroyed;
  }

  /** Whether the command was asked to stop because a reader went away. */
  get pipeClosed(): boolean {
    return this.controller.signal.aborted && (this.controller.signal.reason as { signal?: unknown }).signal === 'SIGPIPE';
  }

  /** Stops listening (the streams outlive the call: the process's stdout, a test's capture). */
  release(): void {
    for (const [stream, onError] of this.listeners) stream.off('error', onError);
    this.listeners.length = 0;
  }

  private failed(name: 'stdout' | 'stderr', stream: Writable, err: Error): void {
    this.closed.add(stream);
    if (isClosedPipe(err)) {
      if (!this.controller.signal.aborted) this.controller.abort(closedPipeReason(name));
      return;
    }
    this.failure ??= { stream: name, error: err };
    if (!this.controller.signal.aborted) this.controller.abort(new Error(`cannot write to ${name}: ${err.message}`));
  }
}
