/**
 * The CLI's smoke test (issue 46 point 1): the built CLI as a process on the Node that runs the suite (process.execPath),
 * through what every user does first: `demo`, `plan`, `sync`, and the daemon started, serving, and stopped by SIGTERM.
 * The whole suite runs on Node 24 in CI; .ci/run runs this file again on Node 22, the oldest supported release, with
 * better-sqlite3 rebuilt for it, so both ends of `engines` are exercised on every submission.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { demoSeed, demoWorkspace, getJson, type StatusRun } from '../daemon/support.js';
import { CliProcess, killAll, until } from '../faults/process.js';

let emulator: TestEmulator;

beforeAll(async () => {
  ensureBuilt();
  emulator = await startTestEmulator(demoSeed());
}, 120_000);
afterEach(killAll);
afterAll(async () => {
  await emulator.close();
});

describe(`the built CLI on Node ${process.versions.node}`, () => {
  it('orgsync demo: the first run creates, the second makes no writes, exit 0', async () => {
    const demo = CliProcess.start(['demo']);
    const exit = await demo.exit(120_000);
    expect(exit.code, demo.stderr).toBe(0);
    expect(demo.stdout).toContain('Plan: 402 to create, 0 to adopt, 15 to update, 0 to move, 0 to remove.');
    expect(demo.stdout).toContain('The second run made 0 writes');
  }, 150_000);

  it('plan, sync, plan again; then the daemon starts, serves /healthz and /status, and stops on SIGTERM (143)', async () => {
    const dir = demoWorkspace({ url: emulator.url });
    const config = `${dir}/orgsync.yaml`;
    const run = async (args: string[]) => {
      const p = CliProcess.start(args, { cwd: dir });
      const exit = await p.exit(120_000);
      return { code: exit.code, stdout: p.stdout, stderr: p.stderr };
    };
    const plan = await run(['plan', '--config', config, '--detailed-exitcode']);
    expect(plan.code, plan.stderr).toBe(5);
    expect(plan.stdout).toMatch(/Plan: \d+ to create/);
    const sync = await run(['sync', '--config', config]);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toMatch(/^sync daemon-e2e: applied \(exit 0\)/);
    const again = await run(['plan', '--config', config, '--detailed-exitcode']);
    expect(again.code, again.stderr).toBe(0);

    const daemon = CliProcess.start(['daemon', '--config', config], { cwd: dir });
    const url = await until('the ops listener line', () => /"url":"(http:[^"]+)","msg":"ops endpoints listening/.exec(daemon.stdout)?.[1], 60_000);
    const status = await until(
      'the start run in /status',
      async () => {
        const { body } = await getJson(`${url}/status`);
        const runs = body.runs as StatusRun[];
        return body.current_run === null && runs.length > 0 ? runs : undefined;
      },
      60_000,
    );
    expect(status[0]).toMatchObject({ trigger: 'start', result: 'success' });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    daemon.signal('SIGTERM');
    const exit = await daemon.exit(30_000);
    expect(exit.code, daemon.stderr).toBe(143);
    expect(daemon.stdout).toContain('"msg":"daemon stopped"');
  }, 300_000);
});
