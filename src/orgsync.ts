#!/usr/bin/env node
// The orgsync command (bundled into dist/cli.js by tools/bundle.mjs). Exit codes: see README "Exit codes".
import { main } from './cli/main.js';
import { isClosedPipe, outputUnwritable } from './cli/output-watch.js';
import { SIGNAL_EXIT } from './shared/errors.js';

// A write error of stdout or stderr is handled by main while a command runs (src/cli/output-watch.ts). One that
// surfaces after main returned (the last chunk of `orgsync config schema | head -1`) must not end in Node's unhandled
// 'error' stack trace either: a closed pipe is the ordinary end of a pipeline; anything else left the output
// incomplete, which the exit code says.
let finished = false;
for (const [name, stream] of [['stdout', process.stdout], ['stderr', process.stderr]] as const) {
  stream.on('error', (err) => {
    if (!finished || isClosedPipe(err)) return;
    const error = outputUnwritable(name, err);
    process.exitCode = error.exitCode;
    if (name === 'stdout') process.stderr.write(`orgsync: ${error.message}\n`);
  });
}

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
finished = true;
process.exitCode = code;
