/** Runs the CLI entry (main) in-process with captured stdout and stderr. */
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { ADMIN } from '../e2e/harness.js';
import type { TestEmulator } from '../helpers/emulator.js';

/** The outcome of one CLI call. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `orgsync <args>`. */
export async function cli(...args: string[]): Promise<CliResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await main(args, { env: {}, stdout, stderr, shutdownSignal: new AbortController().signal, isTTY: false });
  return { code, stdout: out, stderr: err };
}

/** Write requests the emulator has answered so far. */
export async function writeCalls(emulator: TestEmulator): Promise<number> {
  const res = await emulator.request('GET', '/_emulator/requests', { token: ADMIN });
  return (res.body.requests as { method: string; count: number }[]).filter((r) => r.method !== 'GET').reduce((n, r) => n + r.count, 0);
}
