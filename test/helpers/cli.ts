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
  out: { stdout: string; stderr: string };
  shutdown: AbortController;
}

/** A CLI context whose output is captured (written synchronously, so `out` is complete when main resolves). */
export function captureContext(env: Record<string, string | undefined> = {}): CapturedContext {
  const out = { stdout: '', stderr: '' };
  const shutdown = new AbortController();
  const sink = (key: 'stdout' | 'stderr') =>
    new Writable({
      write(chunk, _enc, cb) {
        out[key] += String(chunk);
        cb();
      },
    });
  const ctx: CliContext = { env, stdout: sink('stdout'), stderr: sink('stderr'), shutdownSignal: shutdown.signal, isTTY: false };
  return { ctx, out, shutdown };
}

/** Runs `orgsync <args>` with this environment to its end. */
export async function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  const cap = captureContext(env);
  const code = await main(args, cap.ctx);
  return { code, stdout: cap.out.stdout, stderr: cap.out.stderr };
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
