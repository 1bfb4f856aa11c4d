/**
 * The CLI as a child process, for fault tests that need a real process: signals (SIGSTOP/SIGCONT, SIGTERM, SIGINT),
 * exit codes and exit times. Runs dist/cli.js (CI builds first; `haveBuild()` says when it is missing).
 * Every process started here is killed by `killAll()` (call it in afterEach/afterAll).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir as cleanedTempDir } from '../helpers/temp.js';

/** The repository root. */
export const repoRoot = resolve(import.meta.dirname, '../..');
/** The built CLI. */
export const CLI = join(repoRoot, 'dist/cli.js');

/** True when dist/cli.js exists; in CI its absence is an error, elsewhere the process tests are skipped with a notice. */
export function haveBuild(): boolean {
  const ok = existsSync(CLI);
  if (!ok) {
    const msg = 'dist/cli.js is missing (run npm run build); the process-level fault tests need it';
    if (process.env.CI === 'true') throw new Error(msg);
    console.warn(`NOTICE: ${msg}; skipping them.`);
  }
  return ok;
}

/** How a child process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Date.now() when it exited. */
  at: number;
}

const running = new Set<ChildProcess>();

/** A running `node dist/cli.js ...`. */
export class CliProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<Exit>;
  private ended: Exit | undefined;

  private constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (d: Buffer) => (this.stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolveExit) => {
      child.once('exit', (code, signal) => {
        running.delete(child);
        this.ended = { code, signal, at: Date.now() };
        resolveExit(this.ended);
      });
    });
  }

  /** Starts `orgsync <args>` with a minimal environment (PATH plus `env`). */
  static start(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): CliProcess {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: opts.cwd ?? repoRoot,
      env: { PATH: process.env.PATH ?? '', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    return new CliProcess(child);
  }

  get pid(): number {
    return this.child.pid!;
  }

  get hasExited(): boolean {
    return this.ended !== undefined;
  }

  /** Sends a signal; returns Date.now() just before sending. */
  signal(sig: NodeJS.Signals): number {
    const at = Date.now();
    this.child.kill(sig);
    return at;
  }

  /** The exit, or a rejection after `ms` (the process is then killed). */
  async exit(ms: number): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        reject(new Error(`the process did not exit within ${ms} ms\nstdout: ${this.stdout.slice(-3000)}\nstderr: ${this.stderr.slice(-3000)}`));
      }, ms);
    });
    try {
      return await Promise.race([this.exited, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Kills every process started here that still runs (a stopped one is continued first so it can die). */
export async function killAll(): Promise<void> {
  const waits: Promise<unknown>[] = [];
  for (const child of running) {
    waits.push(new Promise((r) => child.once('exit', r)));
    child.kill('SIGKILL');
  }
  await Promise.all(waits);
}

/** Polls `probe` every 20 ms until it returns a value other than undefined/false, or fails after `ms`. */
export async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A temp folder named orgsync-faults-* (through the cleaning helper), and its removal. */
export function tempDir(): { dir: string; remove(): void } {
  const dir = cleanedTempDir('orgsync-faults-');
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
