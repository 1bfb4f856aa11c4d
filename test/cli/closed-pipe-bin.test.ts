/**
 * Issue 46 point 2, as users run it: the built CLI (`node dist/cli.js`) into `head -n 1` in bash, the exit code its
 * own (PIPESTATUS[0]) as `set -o pipefail` would see it. Outputs larger than a pipe holds (the config schema, a plan
 * of 400 members as JSON or HTML) and commands that print over time (demo, daemon, a sync's log lines) get a write
 * refused by the closed pipe every time; before issue 46 each ended in Node's `Error: write EPIPE` stack trace, exit 1.
 * test/cli/closed-pipe.test.ts covers every command and format in-process.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { writeCsvConfig, writeCsvOrg } from '../e2e/csv-org.js';
import { ADMIN, org } from '../e2e/harness.js';

const TREE = org({
  departments: Array.from({ length: 20 }, (_, i): [string, string] => [`d${i}`, `Department ${i}`]),
  positions: [['p1', 'Engineer']],
  members: Array.from({ length: 400 }, (_, i): [string, string, string, string] => [`u${i}`, `Person ${i}`, `person${i}@acme.test`, `d${i % 20}`]),
});

let emulator: TestEmulator;
let dir: string;
let config: string;

beforeAll(async () => {
  ensureBuilt();
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-pipe-bin-');
  writeCsvOrg(dir, TREE);
  config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw, extra: 'schedule: "0 0 1 1 *"\nmetrics:\n  listen: ""\n' });
}, 120_000);
afterAll(async () => {
  await emulator.close();
});

interface Piped {
  /** orgsync's exit code (PIPESTATUS[0]). */
  code: number;
  /** What `head -n 1` printed. */
  first: string;
  stderr: string;
}

/** `orgsync ARGS | head -n 1` (with `2>&1` when `logs`), orgsync's exit code and what the two printed. */
function intoHead(args: string[], opts: { logs?: boolean } = {}): Promise<Piped> {
  const script = `"$@"${opts.logs ? ' 2>&1' : ''} | head -n 1; exit "\${PIPESTATUS[0]}"`;
  const child = spawn('bash', ['-c', script, 'bash', process.execPath, CLI, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let first = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (first += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, first, stderr }));
  });
}

/** No stack trace, no EPIPE, no error line: the closed pipe is the pipeline's ordinary end. */
function expectQuiet(r: Piped, what: string): void {
  expect(r.stderr, what).toBe('');
}

describe('orgsync ... | head -n 1 (the built CLI, real pipes)', () => {
  it('the help and the config schema (160 KB, more than the pipe holds): exit 0, the first line, nothing on stderr', async () => {
    const schema = await intoHead(['config', 'schema']);
    expect(schema).toEqual({ code: 0, first: '{\n', stderr: '' });
    const help = await intoHead(['--help']);
    expect(help.code).toBe(0);
    expect(help.first).toMatch(/^Usage: orgsync /);
    expectQuiet(help, '--help');
  });

  it('plan as text, JSON and HTML, and a sync whose summary is JSON: exit 0, their first line, nothing on stderr', async () => {
    for (const [args, first] of [
      [['plan', '--config', config, '--output', 'json'], /^\{\n$/],
      [['plan', '--config', config, '--output', 'html'], /^<!doctype html>/i],
      [['plan', '--config', config], /\S/],
      [['sync', '--config', config, '--output', 'json'], /^\{\n$/],
    ] as const) {
      const r = await intoHead([...args]);
      expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
      expect(r.first, args.join(' ')).toMatch(first);
      // The log lines (stderr) are not in the pipe: they are printed whole, and nothing else is.
      expect(r.stderr, args.join(' ')).not.toMatch(/EPIPE|^\s+at |internal error|closed pipe/m);
    }
    expect((await cli('plan', '--config', config, '--detailed-exitcode')).code).toBe(0);
  }, 120_000);

  it('a sync whose log lines go into the pipe too stops as on SIGTERM: exit 141, quiet, and the next sync converges', async () => {
    writeCsvOrg(dir, { ...TREE, members: TREE.members.map((m) => ({ ...m, display_name: `${m.display_name} Jr` })) });
    const r = await intoHead(['sync', '--config', config], { logs: true });
    expect(r.code, r.stderr).toBe(141);
    expect(JSON.parse(r.first)).toMatchObject({ level: 'info' });
    expectQuiet(r, 'sync 2>&1 | head -n 1');
    expect((await cli('sync', '--config', config)).code).toBe(0);
    expect((await cli('plan', '--config', config, '--detailed-exitcode')).code).toBe(0);
  }, 120_000);

  it('the daemon stops by itself when its log lines lose their reader (exit 0); the demo, cut short, exits 141', async () => {
    writeCsvOrg(dir, TREE);
    const daemon = await intoHead(['daemon', '--config', config]);
    expect(daemon.code, daemon.stderr).toBe(0);
    expect(JSON.parse(daemon.first)).toMatchObject({ level: 'info' });
    expectQuiet(daemon, 'daemon | head -n 1');
    const demo = await intoHead(['demo']);
    expect(demo).toEqual({ code: 141, first: 'orgsync demo\n', stderr: '' });
  }, 120_000);
});
