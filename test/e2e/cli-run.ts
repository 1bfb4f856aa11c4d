/** Runs the CLI entry (main) in-process with captured stdout and stderr, for end-to-end tests of commands. */
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { ADMIN } from './harness.js';

/** What one CLI invocation printed and returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `orgsync <args...>` with an empty environment. */
export async function cli(...args: string[]): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await main(args, { env: {}, stdout, stderr, shutdownSignal: new AbortController().signal, isTTY: false });
  return { code, stdout: out, stderr: err };
}

/** Write requests (anything but GET) the emulator has answered so far. */
export async function writeCount(emulator: TestEmulator): Promise<number> {
  const res = await emulator.request('GET', '/_emulator/requests', { token: ADMIN });
  return (res.body.requests as { method: string; count: number }[]).filter((r) => r.method !== 'GET').reduce((n, r) => n + r.count, 0);
}
