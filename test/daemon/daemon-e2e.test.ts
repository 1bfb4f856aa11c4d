import { hostname } from 'node:os';
import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { openRunEnvironment } from '../../src/app/run-environment.js';
import { daemonMain } from '../../src/cli/commands/daemon.js';
import { main } from '../../src/cli/main.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { DEMO_KEY, demoSeed, demoWorkspace, getJson, until, type StatusRun } from './support.js';
import { captureContext } from '../helpers/cli.js';

describe('orgsync daemon end to end against the emulator (in-process, injected schedule)', { timeout: 180_000 }, () => {
  let emulator: TestEmulator;
  let dir: string;
  let url = '';
  const scheduler = new ManualScheduler(30 * 60_000);
  const cap = captureContext();
  let exit: Promise<number>;

  beforeAll(async () => {
    emulator = await startTestEmulator(demoSeed());
    dir = demoWorkspace({ url: emulator.url });
    const config = loadConfig(join(dir, 'orgsync.yaml'), {});
    exit = daemonMain(config, cap.ctx, config.metrics.listen, { scheduler, onListening: (u) => (url = u) });
    await until('the listener', () => (url ? true : undefined));
  }, 180_000);
  afterAll(async () => {
    cap.shutdown.abort(new Error('test over'));
    await exit;
    await emulator?.close();
  });

  const runs = async () => (await getJson(`${url}/status`)).body.runs as StatusRun[];
  const finishedRuns = (n: number) => until(`${n} finished runs`, async () => {
    const list = await runs();
    return list.length >= n && list.every((r) => r.result !== 'running') ? list : undefined;
  });

  it('syncs at start, answers /healthz and /readyz, and reports the run on /status', async () => {
    expect((await getJson(`${url}/healthz`)).body).toEqual({ status: 'ok' });
    const [first] = await finishedRuns(1);
    expect(first).toMatchObject({ trigger: 'start', result: 'success', error: null });
    expect(first!.summary).toMatchObject({ result: 'applied', writes: 417, failures_total: 0, quarantined: 0 });
    const ready = await getJson(`${url}/readyz`);
    expect(ready).toEqual({ status: 200, body: { status: 'ready', checks: { config: 'ok', state_db: 'ok', last_run: 'ok' } } });
    const members = await emulator.request('GET', '/api/external/v1/org/members?limit=200', { token: DEMO_KEY });
    expect(members.status).toBe(200);
  });

  it('runs on each scheduled tick: a no-op run, then a run that writes exactly the one change in the source', async () => {
    expect(scheduler.tick()).toBe(true);
    const afterSecond = await finishedRuns(2);
    expect(afterSecond[0]).toMatchObject({ trigger: 'schedule', result: 'success' });
    expect(afterSecond[0]!.summary).toMatchObject({ result: 'in_sync', writes: 0 });

    const csv = join(dir, 'members.csv');
    writeFileSync(csv, readFileSync(csv, 'utf8').replace('E1002,Lars,Okafor,lars.okafor@demo-corp.test,,Chief Executive Officer', 'E1002,Lars,Okafor,lars.okafor@demo-corp.test,,Chief Executive Officer and Founder'));
    expect(scheduler.tick()).toBe(true);
    const afterThird = await finishedRuns(3);
    expect(afterThird[0]!.summary).toMatchObject({ result: 'applied', writes: 1, applied: { members: { update: 1 } } });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    // Every metric carries the tenant's sync.id as sync_id (one Prometheus, many tenants).
    expect(metrics).toContain('orgsync_runs_total{result="success",sync_id="daemon-e2e"} 3');
    expect(metrics).toContain('orgsync_operations_total{entity="members",op="create",result="applied",sync_id="daemon-e2e"} 304');
    expect(metrics).toMatch(/orgsync_mirror_records\{entity="members",status="active",sync_id="daemon-e2e"\} \d+/);
    expect(metrics).toMatch(/^orgsync_last_success_timestamp_seconds\{sync_id="daemon-e2e"\} \d+/m);
  });

  it('puts one run_id on every log line of a run (JSON lines on stdout)', () => {
    const lines = cap.out.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const runLines = lines.filter((l) => ['run started', 'source read', 'plan computed', 'run finished'].includes(String(l.msg)));
    expect(runLines.length).toBeGreaterThanOrEqual(12);
    for (const l of runLines) expect(l.run_id).toEqual(expect.any(String));
    // Each run's lines share one id, and the three runs have three ids.
    expect(new Set(runLines.map((l) => l.run_id)).size).toBe(3);
    for (const l of lines) expect(l.sync_id).toBe('daemon-e2e');
  });

  it('refuses a second process on the same state DB (lease lock), with the holder named', async () => {
    const config = loadConfig(join(dir, 'orgsync.yaml'), {});
    const statePath = join(dir, 'state/orgsync.db');
    expect(() => openRunEnvironment(config, { env: {} }, { logDestination: captureContext().ctx.stderr, logIsTTY: false })).toThrow(
      `state DB ${statePath} is in use by another orgsync process (pid ${process.pid} on ${hostname()}, since `,
    );
    const second = captureContext();
    const code = await main(['daemon', '--config', join(dir, 'orgsync.yaml')], second.ctx);
    expect(code).toBe(1);
    expect(second.out.stderr).toMatch(new RegExp(`^orgsync: state DB ${statePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another orgsync process \\(pid ${process.pid} on .+, since .+\\); only one process may sync a mirror at a time\\n$`));
  });

  it('stops on the shutdown signal with exit code 0', async () => {
    cap.shutdown.abort(new Error('received SIGTERM'));
    expect(await exit).toBe(0);
    expect(cap.out.stdout).toContain('"msg":"daemon stopped"');
  });
});

describe('orgsync daemon config errors', () => {
  it.each([
    ['schedule: "every 5 minutes"\n', '4:1: schedule: invalid cron expression "every 5 minutes": expression: expected 5 or 6 fields but got 3'],
    ['timezone: Europe/Atlantis\n', '4:1: timezone: unknown time zone (use an IANA name such as UTC or Europe/Berlin)'],
    ['metrics:\n  listen: nine-four-six-four\n', '5:3: metrics.listen: expected host:port (e.g. 0.0.0.0:9464), or "" to turn the listener off'],
  ])('rejects %j with exit 2 and one line', async (block, message) => {
    const dir = demoWorkspace({ url: 'http://127.0.0.1:9' });
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, `platform:\n  base_url: http://127.0.0.1:9\n  api_key: ${DEMO_KEY}\n${block}`);
    const cap = captureContext();
    expect(await main(['daemon', '--config', file], cap.ctx)).toBe(2);
    expect(cap.out.stderr).toBe(`orgsync: ${file}:${message}\n`);
    expect(cap.out.stdout).toBe('');
  });

  it('names a missing config file and a missing variable', async () => {
    let cap = captureContext();
    expect(await main(['daemon', '--config', '/nonexistent/orgsync.yaml'], cap.ctx)).toBe(2);
    expect(cap.out.stderr).toBe('orgsync: cannot read config file /nonexistent/orgsync.yaml: ENOENT\n');
    const dir = demoWorkspace({ url: 'http://127.0.0.1:9', apiKeyLine: 'api_key: ${ORGSYNC_API_KEY}' });
    cap = captureContext();
    expect(await main(['daemon', '--config', join(dir, 'orgsync.yaml')], cap.ctx)).toBe(2);
    expect(cap.out.stderr).toBe(`orgsync: ${join(dir, 'orgsync.yaml')}:3:3: platform.api_key: environment variable ORGSYNC_API_KEY is not set\n`);
  });

  it('--help shows examples for daemon and demo', async () => {
    for (const cmd of ['daemon', 'demo']) {
      const cap = captureContext();
      expect(await main([cmd, '--help'], cap.ctx)).toBe(0);
      expect(cap.out.stdout).toContain('Examples:');
    }
  });
});
