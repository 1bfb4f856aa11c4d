/** Runs the CLI entry (main) in-process with captured stdout and stderr: the one helper of test/trust/cli.ts, under the names the e2e tests use. */
export { cli, writeCalls as writeCount, type CliResult as CliRun } from '../trust/cli.js';
