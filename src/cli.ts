#!/usr/bin/env node
// The orgsync command. Exit codes: see README "Exit codes".
import { main } from './cli/main.js';

const controller = new AbortController();
let signalled = 0;
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.on(sig, () => {
    signalled += 1;
    // A second signal means "now": do not wait for a graceful stop.
    if (signalled > 1) process.exit(130);
    controller.abort(new Error(`received ${sig}`));
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
