/**
 * Issue 46 point 2, in-process: every command that prints, in every output format (text, JSON, HTML, log lines,
 * progress), run with its stdout (or stderr) behaving as in `orgsync ... | head -1`: the reader takes one line and
 * goes away, every later write fails with EPIPE (captureContext's closeAfterFirstLine). Each ends quietly: no stack
 * trace or error line, exit 0 (141 where the closed pipe cut a run short), and the state DB is whole afterwards (the
 * next run converges, the saved plan and the backup are complete). test/cli/closed-pipe-bin.test.ts runs the built
 * CLI into real pipes closed by `head -n 1`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, runCliWithFaults, type FaultedCliResult } from '../helpers/cli.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { writeCsvConfig, writeCsvOrg } from '../e2e/csv-org.js';
import { ADMIN, org } from '../e2e/harness.js';
import { openStateDb } from '../../src/mirror/db.js';
import { RunHistory } from '../../src/mirror/runs.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';

// Enough records that the JSON and HTML documents are larger than a pipe holds (64 KiB), so the pipe
// closes in the middle of it.
const MEMBERS = 400;
const TREE = org({
  departments: Array.from({ length: 30 }, (_, i): [string, string] => [`d${i}`, `Department ${i}`]),
  positions: [['p1', 'Engineer']],
  members: Array.from({ length: MEMBERS }, (_, i): [string, string, string, string] => [`u${i}`, `Person ${i}`, `person${i}@acme.test`, `d${i % 30}`]),
});

/** The tree with every member renamed: a run with work to do. */
const renamed = (suffix: string) => ({ ...TREE, members: TREE.members.map((m) => ({ ...m, display_name: `${m.display_name}${suffix}` })) });

let emulator: TestEmulator;
let dir: string;
let config: string;

beforeAll(async () => {
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-pipe-');
  writeCsvOrg(dir, TREE);
  config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw, extra: 'schedule: "0 0 1 1 *"\nmetrics:\n  listen: ""\n' });
});
afterAll(async () => {
  await emulator.close();
});

/** `refused`: the writes the closed pipe refused; at least one means it closed while the command still printed. */
type PipeRun = FaultedCliResult;

/** Runs `orgsync <args>` in-process with `stream` closed after its first line. */
const intoClosedPipe = (args: string[], stream: 'stdout' | 'stderr' = 'stdout'): Promise<PipeRun> => runCliWithFaults(args, { closeAfterFirstLine: stream });

/** Nothing a closed pipe should make a user see: a stack trace, the EPIPE, an error line of orgsync's. */
function expectQuiet(r: PipeRun, what: string): void {
  expect(r.stderr, what).not.toMatch(/^\s+at /m);
  expect(r.stderr, what).not.toMatch(/EPIPE|internal error|closed pipe|went away/);
}

const cfg = () => ['--config', config];

describe('output into a pipe closed after one line ends quietly', () => {
  it('help, version and the config schema: exit 0, the first line printed', async () => {
    for (const [args, first] of [
      [['--help'], /^Usage: orgsync /],
      [['plan', '--help'], /^Usage: orgsync plan /],
      [['--version'], /^\d+\.\d+\.\d+/],
      [['config', 'schema'], /^\{/],
    ] as const) {
      const r = await intoClosedPipe([...args]);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).toMatch(first);
      expectQuiet(r, args.join(' '));
    }
    // The schema is one document of many lines written in chunks: the pipe refused the rest.
    expect((await intoClosedPipe(['config', 'schema'])).refused).toBeGreaterThan(0);
  });

  it('read-only commands before the first sync, text, JSON and HTML: exit 0 (5 for --detailed-exitcode), nothing written', async () => {
    const cases: [string[], number, RegExp][] = [
      [['config', 'validate', ...cfg()], 0, /valid/],
      [['sources', 'check', ...cfg()], 0, /\S/],
      [['sources', 'check', ...cfg(), '--json'], 0, /^\{/],
      [['sources', 'preview', ...cfg(), '--limit', '50'], 0, /\S/],
      [['sources', 'preview', ...cfg(), '--limit', '50', '--output', 'json'], 0, /^[[{]/],
      [['sources', 'suggest', '--sample', join(dir, 'members.csv')], 0, /\S/],
      [['plan', ...cfg()], 0, /\S/],
      [['plan', ...cfg(), '--detailed-exitcode'], 5, /\S/],
      [['plan', ...cfg(), '--output', 'json'], 0, /^\{/],
      [['plan', ...cfg(), '--output', 'html'], 0, /^<!doctype html>/i],
      [['mirror', 'status', ...cfg()], 0, /\S/],
    ];
    for (const [args, code, first] of cases) {
      const r = await intoClosedPipe(args);
      expect(r.code, args.join(' ')).toBe(code);
      expect(r.stdout, args.join(' ')).toMatch(first);
      expectQuiet(r, args.join(' '));
    }
    // The JSON and HTML documents are larger than the pipe holds: the pipe closed while they were written.
    for (const args of [['config', 'schema'], ['sources', 'preview', ...cfg(), '--limit', '50', '--output', 'json'], ['plan', ...cfg(), '--output', 'json'], ['plan', ...cfg(), '--output', 'html']]) {
      expect((await intoClosedPipe(args)).refused, args.join(' ')).toBeGreaterThan(0);
    }
    // A read-only command whose log lines (stderr) lose their reader stops as asked: quietly, exit 141.
    const logs = await intoClosedPipe(['plan', ...cfg()], 'stderr');
    expect(logs.code).toBe(141);
    expect(logs.refused).toBeGreaterThan(0);
    expectQuiet(logs, 'plan 2>&1 | head -1');
    expect((await cli('plan', ...cfg(), '--detailed-exitcode')).code).toBe(5);
  });

  it('plan --out FILE: the saved plan is whole although stdout closed, and apply takes it', async () => {
    const saved = join(dir, 'saved.plan');
    const r = await intoClosedPipe(['plan', ...cfg(), '--out', saved]);
    expect(r.code).toBe(0);
    expectQuiet(r, 'plan --out');
    expect(existsSync(saved)).toBe(true);
    // `apply` refuses a saved plan that is cut short or edited; this one it applies, and the tenant is then in sync.
    const applied = await cli('apply', saved, ...cfg());
    expect(applied.code, applied.stderr).toBe(0);
    expect((await cli('plan', ...cfg(), '--detailed-exitcode')).code).toBe(0);
  });

  it('sync whose log lines lose their reader stops like SIGTERM (exit 141), records it, and the next sync converges', async () => {
    writeCsvOrg(dir, renamed(' Sr'));
    const stopped = await intoClosedPipe(['sync', ...cfg()], 'stderr');
    expect(stopped.code).toBe(141);
    expect(stopped.refused).toBeGreaterThan(0);
    expectQuiet(stopped, 'sync 2>&1 | head -1');
    // No run is left open in the run history (the stop came before the run had made a write, or it recorded it).
    const db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    try {
      expect(new RunHistory(db).recent(5).map((run) => run.result)).not.toContain('running');
    } finally {
      db.close();
    }
    // On a terminal the progress line and readable log lines go to stderr: its reader going away stops the run too.
    writeCsvOrg(dir, renamed(' Tty'));
    const progress = await runCliWithFaults(['sync', ...cfg()], { closeAfterFirstLine: 'stderr', tty: true });
    expect(progress.code).toBe(141);
    expect(progress.refused).toBeGreaterThan(0);
    expectQuiet(progress, 'sync on a terminal 2>&1 | head -1');
    // stdout closed: the summary is printed last, after the work, so the sync finishes and exits with its own code.
    const synced = await intoClosedPipe(['sync', ...cfg()]);
    expect(synced.code).toBe(0);
    expect(synced.stdout).toMatch(/^sync hr-sync: applied \(exit 0\)/);
    expectQuiet(synced, 'sync | head -1');
    const json = await intoClosedPipe(['sync', ...cfg(), '--output', 'json']);
    expect(json.code).toBe(0);
    expect(json.refused).toBeGreaterThan(0);
    expectQuiet(json, 'sync --output json | head -1');
    expect((await cli('plan', ...cfg(), '--detailed-exitcode')).code).toBe(0);
  }, 120_000);

  it('the commands that read the state: explain, history, mirror status, adopt and release dry runs, state backup', async () => {
    const backup = join(dir, 'backup.db');
    const cases: [string[], RegExp][] = [
      [['explain', ...cfg(), 'u7'], /\S/],
      [['history', ...cfg(), 'u7'], /\S/],
      [['history', ...cfg(), 'u7', '--output', 'json'], /^[[{]/],
      [['mirror', 'status', ...cfg(), '--json'], /^\{/],
      [['adopt', ...cfg(), '--match', 'email', '--dry-run'], /\S/],
      [['release', ...cfg(), 'u7', '--dry-run'], /\S/],
      [['state', 'backup', ...cfg(), backup], /\S/],
    ];
    for (const [args, first] of cases) {
      const r = await intoClosedPipe(args);
      expect(r.code, `${args.join(' ')}\n${r.stderr.slice(-600)}`).toBe(0);
      expect(r.stdout, args.join(' ')).toMatch(first);
      expectQuiet(r, args.join(' '));
    }
    const restored = await cli('state', 'restore', ...cfg(), backup);
    expect(restored.code, restored.stderr).toBe(0);
    expect((await cli('plan', ...cfg(), '--detailed-exitcode')).code).toBe(0);
  }, 120_000);

  it('a refused sync keeps its exit code 3, and approvals list and show print text, JSON and HTML into the closed pipe', async () => {
    const guarded = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw, sync: 'id: hr-sync' });
    writeCsvOrg(dir, { ...TREE, members: TREE.members.slice(0, 100) });
    const refused = await intoClosedPipe(['sync', '--config', guarded]);
    expect(refused.code).toBe(3);
    expect(refused.refused).toBeGreaterThan(0);
    expect(refused.stderr).toMatch(/^orgsync: the plan removes/m);
    expectQuiet(refused, 'refused sync | head -1');
    const digest = /sha256:[0-9a-f]{12}/.exec((await cli('approvals', 'list', '--config', guarded)).stdout)?.[0];
    expect(digest).toBeDefined();
    for (const args of [
      ['approvals', 'list', '--config', guarded],
      ['approvals', 'list', '--config', guarded, '--output', 'json'],
      ['approvals', 'show', digest!, '--config', guarded],
      ['approvals', 'show', digest!, '--config', guarded, '--output', 'json'],
      ['approvals', 'show', digest!, '--config', guarded, '--output', 'html'],
    ]) {
      const r = await intoClosedPipe(args);
      expect(r.code, args.join(' ')).toBe(0);
      expectQuiet(r, args.join(' '));
    }
    writeCsvOrg(dir, TREE);
  }, 120_000);

  it('the daemon, whose log lines are its stdout, stops by itself when their reader goes away (exit 0)', async () => {
    // A run to do, so the daemon has more to log than its first line.
    writeCsvOrg(dir, renamed(' Jr'));
    const r = await intoClosedPipe(['daemon', ...cfg()]);
    expect(r.code).toBe(0);
    expect(r.refused).toBeGreaterThan(0);
    expect(JSON.parse(r.stdout.split('\n')[0]!)).toMatchObject({ level: 'info' });
    expectQuiet(r, 'daemon | head -1');
    // What it did is recorded and consistent: the next sync converges.
    expect((await cli('sync', ...cfg())).code).toBe(0);
    expect((await cli('plan', ...cfg(), '--detailed-exitcode')).code).toBe(0);
    writeCsvOrg(dir, TREE);
  }, 120_000);

  it('the demo, cut short after its first line, stops quietly with 141 (a writer the pipe stopped)', async () => {
    const r = await intoClosedPipe(['demo']);
    expect(r.code).toBe(141);
    expect(r.stdout).toBe('orgsync demo\n');
    expect(r.refused).toBeGreaterThan(0);
    expectQuiet(r, 'demo | head -1');
  }, 120_000);

  it('a write failure other than a closed pipe (ENOSPC) is an error: exit 1, one line naming it, nothing else claimed', async () => {
    const full = await runCliWithFaults(['config', 'schema'], { noSpace: 'stdout' });
    expect(full.code).toBe(1);
    expect(full.stderr).toBe('orgsync: cannot write the output to stdout: ENOSPC: no space left on device, write; what was written is incomplete\n');
    const plan = await runCliWithFaults(['plan', ...cfg(), '--output', 'json'], { noSpace: 'stdout' });
    expect(plan.code).toBe(1);
    expect(plan.stderr).toMatch(/^orgsync: cannot write the output to stdout: ENOSPC/m);
    expect(plan.stderr).not.toMatch(/^\s+at /m);
  });
});
