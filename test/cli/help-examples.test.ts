/**
 * Issue 32 point 5: every example of every command's --help runs as written against the demo data. The commands are
 * discovered from the program (each help's "Commands:" list, recursively), so commands added later are covered with
 * their examples. Each `$ ...` line runs in a shell, in a temporary working folder that holds what a newcomer has after
 * the README's walkthrough: `my-sync.yaml` (the README's own config block) and `config/demo/`; the platform is an
 * emulator with the demo tenant, named by ORGSYNC_URL and ORGSYNC_API_KEY as the README does, and `orgsync` on the PATH
 * is the built CLI. An example exits 0 unless its comment documents another code (`# ... (exit 1: ...)`); one whose
 * comment says `runs until Ctrl-C` is started, left running while the next examples of its command run (the `curl`
 * lines of the daemon), and stopped with SIGINT (exit 130, or the code its comment documents). About 45 examples,
 * each a process: minutes on a loaded machine.
 */
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt, repoRoot } from '../helpers/build.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { runCli } from '../helpers/cli.js';
import { DEMO_KEY, demoSeed, until } from '../daemon/support.js';

/** One example line of a command's help. */
interface Example {
  command: string;
  line: string;
  /** The exit code its comment documents (when none: 0, or 130 for one that runs until Ctrl-C). */
  code: number;
  longRunning: boolean;
}

async function helpOf(path: string[]): Promise<string> {
  const r = await runCli([...path, '--help']);
  expect(r.code, `orgsync ${path.join(' ')} --help`).toBe(0);
  return r.stdout;
}

/** The subcommands a help lists under "Commands:" (without `help`). */
function subcommandsOf(help: string): string[] {
  const start = help.indexOf('\nCommands:\n');
  if (start < 0) return [];
  const names: string[] = [];
  for (const line of help.slice(start + '\nCommands:\n'.length).split('\n')) {
    if (line.trim() === '') break;
    const name = /^ {2}([a-z][\w-]*)/.exec(line)?.[1];
    if (name && name !== 'help') names.push(name);
  }
  return names;
}

/** Every `$ ...` line of every command's help, the program's own first, commands in the order the program lists them. */
async function discoverExamples(): Promise<{ commands: string[]; examples: Example[] }> {
  const commands: string[] = [];
  const examples: Example[] = [];
  const seen = new Set<string>();
  const walk = async (path: string[]): Promise<void> => {
    const help = await helpOf(path);
    const command = ['orgsync', ...path].join(' ');
    commands.push(command);
    for (const m of help.matchAll(/^\s+\$ (.+)$/gm)) {
      const line = m[1]!.trim();
      // The same example under a group and its subcommand runs once.
      if (seen.has(line)) continue;
      seen.add(line);
      const comment = line.includes(' #') ? line.slice(line.indexOf(' #')) : '';
      const longRunning = /runs until Ctrl-C/.test(comment);
      // Stopped by Ctrl-C, orgsync exits 130 unless the example says otherwise.
      examples.push({ command, line, code: Number(/\bexit (\d+)\b/.exec(comment)?.[1] ?? (longRunning ? 130 : 0)), longRunning });
    }
    for (const sub of subcommandsOf(help)) await walk([...path, sub]);
  };
  await walk([]);
  return { commands, examples };
}

let emulator: TestEmulator;
let work: string;
let env: Record<string, string>;

beforeAll(async () => {
  ensureBuilt();
  emulator = await startTestEmulator(demoSeed());
  work = tempDir('orgsync-examples-');
  // What a newcomer has after step 1 of the walkthrough: the checkout's config/demo/ and the README's my-sync.yaml.
  cpSync(join(repoRoot, 'config', 'demo'), join(work, 'config', 'demo'), { recursive: true, filter: (src) => !src.includes('/var') });
  cpSync(join(repoRoot, 'config', 'orgsync.example.yaml'), join(work, 'config', 'orgsync.example.yaml'));
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const block = /Save this as `my-sync\.yaml`[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme);
  if (!block) throw new Error('README.md: no ```yaml block after "Save this as `my-sync.yaml`"');
  writeFileSync(join(work, 'my-sync.yaml'), block[1]!);
  // `orgsync` on the PATH is the built CLI (npm link would make the same).
  const bin = join(work, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'orgsync'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(bin, 'orgsync'), 0o755);
  env = { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: work, ORGSYNC_URL: emulator.url, ORGSYNC_API_KEY: DEMO_KEY };
}, 120_000);

afterAll(async () => {
  await emulator.close();
});

interface Ran {
  code: number | null;
  out: () => string;
  stop: () => Promise<number | null>;
  done: Promise<number | null>;
}

/** Starts one example in a shell in the working folder; a long-running one is exec'd, so SIGINT reaches orgsync. */
function start(example: Example): Ran {
  const script = example.longRunning ? `exec ${example.line.slice(0, example.line.indexOf(' #'))}` : example.line;
  const child = spawn('sh', ['-c', script], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const ran: Ran = {
    code: null,
    out: () => out,
    done: new Promise((resolve) => child.once('exit', (code) => resolve((ran.code = code)))),
    stop: async () => {
      child.kill('SIGINT');
      return ran.done;
    },
  };
  return ran;
}

/** Waits until a long-running example is doing its job: the daemon has finished a run, the demo says it keeps running. */
async function whenReady(example: Example, ran: Ran): Promise<void> {
  const exited = () => (ran.code !== null ? `exited ${ran.code}: ${ran.out()}` : undefined);
  if (/^orgsync daemon /.test(example.line)) {
    const listen = /--listen (\S+)/.exec(example.line)?.[1] ?? /listen: (\S+)/.exec(readFileSync(join(work, 'my-sync.yaml'), 'utf8'))?.[1];
    await until(`${example.line}: a finished run in /status`, async () => {
      if (exited()) throw new Error(exited());
      const res = await fetch(`http://${listen}/status`).catch(() => undefined);
      const body = res?.ok ? ((await res.json()) as { current_run: unknown; runs: unknown[] }) : undefined;
      return body && body.current_run === null && body.runs.length > 0 ? true : undefined;
    });
  } else if (/^orgsync emulator /.test(example.line)) {
    await until(`${example.line}: "listening on"`, () => {
      if (exited()) throw new Error(exited());
      return ran.out().includes('orgsync emulator listening on http') ? true : undefined;
    });
  } else if (/^orgsync demo /.test(example.line)) {
    await until(`${example.line}: "keeps running"`, () => {
      if (exited()) throw new Error(exited());
      return ran.out().includes('keeps running') ? true : undefined;
    });
  } else {
    throw new Error(`${example.line}: a long-running example this test does not know how to wait for; add its readiness check here`);
  }
}

describe('the examples of every --help run against the demo data as written', () => {
  it('discovers the commands from the program and runs each example with its documented exit code', async () => {
    const { commands, examples } = await discoverExamples();
    // The walkthrough's commands are the program's own examples.
    expect(examples.filter((e) => e.command === 'orgsync').map((e) => e.line.replace(/\s+#.*$/, ''))).toEqual([
      'orgsync config validate --config my-sync.yaml',
      'orgsync sources check --config my-sync.yaml',
      'orgsync plan --config my-sync.yaml',
      'orgsync sync --config my-sync.yaml',
      'orgsync daemon --config my-sync.yaml',
    ]);
    expect(commands).toEqual(expect.arrayContaining(['orgsync plan', 'orgsync sync', 'orgsync sources check', 'orgsync state backup', 'orgsync approvals approve']));
    const failures: string[] = [];
    let running: { example: Example; ran: Ran } | undefined;
    const stopRunning = async () => {
      if (!running) return;
      const code = await running.ran.stop();
      if (code !== running.example.code) failures.push(`${running.example.line}: exit ${code} after SIGINT, expected ${running.example.code}\n${running.ran.out()}`);
      running = undefined;
    };
    let previous = '';
    for (const example of examples) {
      // A long-running example runs while the next examples of its own command do (the daemon's curl lines).
      if (example.command !== previous || example.longRunning) await stopRunning();
      previous = example.command;
      const ran = start(example);
      if (example.longRunning) {
        try {
          await whenReady(example, ran);
          running = { example, ran };
        } catch (err) {
          failures.push(`${example.line}: ${(err as Error).message}`);
          await ran.stop();
        }
        continue;
      }
      const code = await ran.done;
      if (code !== example.code) failures.push(`${example.command}: ${example.line}: exit ${code}, expected ${example.code}\n${ran.out()}`);
    }
    await stopRunning();
    expect(failures).toEqual([]);
    expect(examples.length).toBeGreaterThan(30);
  }, 1_200_000);
});
