/**
 * The CLI as a user runs it, measured: `node dist/cli.js ...args` as its own process, stdout into a file, with a
 * `--require`d probe that records the process's own peak RSS (getrusage maxRSS) at exit. Shared by bench:commands
 * and bench:memory, whose figures must be taken the same way.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The CLI measured: the checkout's build, or BENCH_CLI (a copy of it, so a long run survives a rebuild). */
const CLI = process.env.BENCH_CLI ?? fileURLToPath(new URL('../../../dist/cli.js', import.meta.url));
/** Written into every measured process: at exit it records its peak RSS (KB, from getrusage) in ORGSYNC_BENCH_RSS_FILE. */
const PROBE = "process.on('exit', () => require('node:fs').writeFileSync(process.env.ORGSYNC_BENCH_RSS_FILE, String(process.resourceUsage().maxRSS)))";

/** What one measured CLI process did. */
export interface CliRun {
  exit: number | null;
  /** Wall time, spawn to exit, to a tenth of a second. */
  seconds: number;
  peakMb: number;
  stdoutBytes: number;
  /** The last 2,000 characters of stderr, trimmed. */
  stderr: string;
}

/** Runs `orgsync ...args` in `dir` with `env` added; `meanwhile` runs while it does (given the process, e.g. to stop it). */
export async function runMeasuredCli(dir: string, name: string, args: readonly string[], meanwhile?: (child: ChildProcess) => Promise<void>, env: Record<string, string> = {}): Promise<CliRun> {
  const probe = join(dir, 'probe.cjs');
  writeFileSync(probe, `${PROBE};\n`);
  const rssFile = join(dir, `${name}.rss`);
  const outFile = join(dir, `${name}.out`);
  const fd = openSync(outFile, 'w');
  const started = process.hrtime.bigint();
  let stderr = '';
  const exit = await new Promise<number | null>((resolve) => {
    // BENCH_CLI_WRAPPER: a command the CLI runs under (a profiler, a memory sampler), its words split on spaces.
    const wrapper = process.env.BENCH_CLI_WRAPPER?.split(' ').filter((w) => w !== '') ?? [];
    // BENCH_NODE_ARGS: node's own flags for the CLI (--trace-gc, --cpu-prof; NODE_OPTIONS refuses some of them).
    const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter((w) => w !== '') ?? [];
    // BENCH_NODE: another node binary for the CLI (a runtime the bench itself does not run on; BENCH_CLI's
    // node_modules must be built for it).
    const node = process.env.BENCH_NODE ?? process.execPath;
    const argv = [...wrapper, node, ...nodeArgs, '--require', probe, CLI, ...args];
    const child = spawn(argv[0]!, argv.slice(1), { cwd: dir, env: { ...process.env, ...env, ORGSYNC_BENCH_RSS_FILE: rssFile }, stdio: ['ignore', fd, 'pipe'] });
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    child.once('exit', resolve);
    void meanwhile?.(child);
  });
  closeSync(fd);
  const seconds = Math.round(Number(process.hrtime.bigint() - started) / 1e8) / 10;
  const peakMb = Math.round(Number(readFileSync(rssFile, 'utf8')) / 1024);
  const stdoutBytes = statSync(outFile).size;
  if (process.env.BENCH_KEEP_OUTPUT !== '1') rmSync(outFile, { force: true });
  return { exit, seconds, peakMb, stdoutBytes, stderr: stderr.trim() };
}
