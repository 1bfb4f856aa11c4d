#!/usr/bin/env node
// The orgsync command (bundled into dist/cli.js by tools/bundle.mjs). Exit codes: see README "Exit codes".
import { keepWasmOnBaselineCompiler } from './app/wasm-compiler.js';
import { main } from './cli/main.js';
import { SIGNAL_EXIT } from './shared/errors.js';

keepWasmOnBaselineCompiler();

const controller = new AbortController();
let signalled = 0;
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.on(sig, () => {
    signalled += 1;
    // A second signal means "now": do not wait for a graceful stop.
    if (signalled > 1) process.exit(SIGNAL_EXIT[sig]);
    // The command stops (shutdown_timeout bounds it) and main() exits 130 (SIGINT) or 143 (SIGTERM).
    controller.abort(Object.assign(new Error(`received ${sig}`), { signal: sig }));
  });
}

const code = await main(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  shutdownSignal: controller.signal,
  isTTY: Boolean(process.stdout.isTTY),
});
process.exitCode = code;
