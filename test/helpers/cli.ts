/**
 * The CLI in-process, the one way tests run it: `main` of src/cli/main.ts with stdout and stderr captured as text,
 * an environment of the test's choosing (empty unless given) and no terminal. `runCli` and `cli` run one command to
 * its end; `captureContext` is for what a test drives itself (a daemon it stops, output read while it runs).
 * test/tools/test-helpers-once.test.ts keeps test files from growing their own runner again.
 */
import { Writable } from 'node:stream';
import type { CliContext } from '../../src/cli/context.js';
import { main } from '../../src/cli/main.js';
import { ADMIN } from '../e2e/harness.js';
import type { TestEmulator } from './emulator.js';

/** The outcome of one CLI call: its exit code and everything it printed. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A captured CLI context: `ctx` for main, `out` filling as it prints, `shutdown` to abort it (what SIGTERM does). */
export interface CapturedContext {
  ctx: CliContext;
  /** What was printed; `refused`: the writes a closed pipe refused (see captureContext's `closeAfterFirstLine`). */
  out: { stdout: string; stderr: string; refused: number };
  shutdown: AbortController;
}

/** The error a write gets from libuv, as process.stdout reports it: EPIPE (the reader went away), ENOSPC (disk full). */
function writeError(code: 'EPIPE' | 'ENOSPC'): NodeJS.ErrnoException {
  const message = code === 'EPIPE' ? 'write EPIPE' : 'ENOSPC: no space left on device, write';
  return Object.assign(new Error(message), { code, errno: code === 'EPIPE' ? -32 : -28, syscall: 'write' });
}

/** What a pipe holds before its writer blocks (Linux: 16 pages). */
const PIPE_CAPACITY = 65_536;

/** How a captured stream fails, as process.stdout does (see captureContext). */
export interface CaptureFaults {
  /** This stream's reader goes away after the first line, as `head -1`'s does. */
  closeAfterFirstLine?: 'stdout' | 'stderr';
  /** Every write to this stream fails with ENOSPC, as a redirect to a full disk does. */
  noSpace?: 'stdout' | 'stderr';
  /** stdout is a terminal (the sync's progress line, readable log lines). */
  tty?: boolean;
}

/**
 * A CLI context whose output is captured (written synchronously, so `out` is complete when main resolves).
 * `closeAfterFirstLine`: that stream behaves as process.stdout does in `orgsync ... | head -1`, whose reader goes away
 * once it has the first line: the pipe takes what it holds (64 KiB) of the write that completes the first line, that
 * write fails with EPIPE if it was longer, and so does every later one; the stream is then destroyed and emits 'error'
 * once. `noSpace`: every write to that stream fails with ENOSPC. What the bin (src/orgsync.ts) does with an 'error'
 * after main returned is done here too: nothing.
 */
export function captureContext(env: Record<string, string | undefined> = {}, faults: CaptureFaults = {}): CapturedContext {
  const out = { stdout: '', stderr: '', refused: 0 };
  const shutdown = new AbortController();
  const sink = (key: 'stdout' | 'stderr') => {
    const closes = faults.closeAfterFirstLine === key;
    const full = faults.noSpace === key;
    let readerGone = false;
    const stream = new Writable({
      write(chunk, _enc, cb) {
        const text = String(chunk);
        if (full) {
          out.refused += 1;
          cb(writeError('ENOSPC'));
          return;
        }
        if (closes && (readerGone || out[key].length + text.length > PIPE_CAPACITY)) {
          if (!readerGone) out[key] += text.slice(0, PIPE_CAPACITY - out[key].length);
          readerGone = true;
          out.refused += 1;
          cb(writeError('EPIPE'));
          return;
        }
        out[key] += text;
        if (closes && out[key].includes('\n')) readerGone = true;
        cb();
      },
    });
    if (closes || full) stream.on('error', () => {});
    return stream;
  };
  const ctx: CliContext = { env, stdout: sink('stdout'), stderr: sink('stderr'), shutdownSignal: shutdown.signal, isTTY: faults.tty === true };
  return { ctx, out, shutdown };
}

/** Runs `orgsync <args>` with this environment to its end. */
export async function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  const cap = captureContext(env);
  const code = await main(args, cap.ctx);
  return { code, stdout: cap.out.stdout, stderr: cap.out.stderr };
}

/** A CLI call whose output failed as `faults` says; `refused`: the writes that failed. */
export interface FaultedCliResult extends CliResult {
  refused: number;
}

/** Runs `orgsync <args>` with an empty environment, its stdout or stderr failing as `faults` says (captureContext). */
export async function runCliWithFaults(args: string[], faults: CaptureFaults): Promise<FaultedCliResult> {
  const cap = captureContext({}, faults);
  const code = await main(args, cap.ctx);
  return { code, stdout: cap.out.stdout, stderr: cap.out.stderr, refused: cap.out.refused };
}

/** Runs `orgsync <args>` with an empty environment to its end. */
export function cli(...args: string[]): Promise<CliResult> {
  return runCli(args);
}

/** Write requests (anything but GET) the emulator has answered so far. */
export async function writeCalls(emulator: TestEmulator): Promise<number> {
  const res = await emulator.request('GET', '/_emulator/requests', { token: ADMIN });
  return (res.body.requests as { method: string; count: number }[]).filter((r) => r.method !== 'GET').reduce((n, r) => n + r.count, 0);
}
