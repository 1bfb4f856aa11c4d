/**
 * Issue 15 point 3: a run is `failed`, not `partial`, when the platform refuses the credential on a write (403
 * scope_denied here: a read-only key). No further write is started, exit 1, one line naming the missing scope; the
 * daemon counts it as a failure (/readyz not ready at once), and the metrics of such a run fire the shipped alerts
 * (promtool test rules over the values the run exported).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { daemonMain } from '../../src/cli/commands/daemon.js';
import { loadConfig } from '../../src/config/load.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { RunHistory } from '../../src/mirror/runs.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { getJson, until, type StatusRun } from '../daemon/support.js';
import { captureContext } from '../helpers/cli.js';
import { renderAlerts, values } from '../helm/chart.js';
import { promtool, requireTool } from '../observability/tools.js';
import { cli, writeCalls } from '../helpers/cli.js';
import { writeCsvConfig, writeCsvOrg } from './csv-org.js';
import { ADMIN, org } from './harness.js';
import { tempDir } from '../helpers/temp.js';

const TREE = org({
  departments: [
    ['eng', 'Engineering'],
    ['ops', 'Operations'],
  ],
  members: [
    ['u1', 'Ann Lee', 'ann@acme.test', 'eng'],
    ['u2', 'Bob Roy', 'bob@acme.test', 'ops'],
    ['u3', 'Cid Moe', 'cid@acme.test', 'ops'],
  ],
});
const SCOPE_LINE = /^orgsync: the platform credential lacks the scope tenant\.org\.write \(.*\): stopped after 0 writes$/m;

let emulator: TestEmulator;
let dir: string;

beforeEach(async () => {
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-scope-');
  writeCsvOrg(dir, TREE);
});
afterEach(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a read-only key', () => {
  it('sync fails at the first refused write: exit 1, result failed, one line naming the scope, nothing else started', async () => {
    const config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRead, platformExtra: '  concurrency: 1\n' });
    const r = await cli('sync', '--config', config, '--output', 'json');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(SCOPE_LINE);
    expect(r.stderr.split('\n').filter((l) => l.startsWith('orgsync: '))).toHaveLength(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.result).toBe('failed');
    expect(doc.exit_code).toBe(1);
    expect(doc.error).toMatch(/^the platform credential lacks the scope tenant\.org\.write \(.*\): stopped after 0 writes$/);
    // Five changes planned; the first write was refused and nothing more was started.
    expect(await writeCalls(emulator)).toBe(1);
    expect(doc.failures.filter((f: { status: string }) => f.status === 'failed')).toHaveLength(1);
    // What depended on the refused create is skipped; everything else was never started.
    expect(doc.failures.filter((f: { status: string }) => f.status === 'skipped').length + doc.not_started).toBe(4);
    expect(doc.not_started).toBeGreaterThan(0);

    const text = await cli('sync', '--config', config);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^sync hr-sync: failed \(exit 1\)/);
    expect(text.stdout).not.toContain('partial');
  });

  it('a write answered 401 (the credential rejected) fails the run the same way', async () => {
    const config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw, platformExtra: '  concurrency: 1\n' });
    // Reads pass; every write is answered 401, as when a key is revoked between the refresh and the apply.
    await emulator.request('PUT', '/_emulator/faults', { token: ADMIN, body: { probability: 1, statuses: [401], methods: ['POST', 'PATCH', 'DELETE'] } });
    const r = await cli('sync', '--config', config, '--output', 'json');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^orgsync: the platform rejected the credential \(.*\): stopped after 0 writes$/m);
    const doc = JSON.parse(r.stdout);
    expect(doc.result).toBe('failed');
    expect(doc.failures.filter((f: { status: string }) => f.status === 'failed')).toHaveLength(1);
    expect(doc.not_started).toBeGreaterThan(0);
    const requests = (await emulator.request('GET', '/_emulator/requests', { token: ADMIN })).body.requests as { method: string; status: number; count: number }[];
    expect(requests.filter((q) => q.method !== 'GET').reduce((n, q) => n + q.count, 0)).toBe(1);
  });

  it('orgsync apply of a saved plan fails the same way (not "stopped by a shutdown signal"), and records the run as failed', async () => {
    const config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw, platformExtra: '  concurrency: 1\n' });
    expect((await cli('plan', '--config', config, '--out', join(dir, 'plan.json'))).code).toBe(0);
    writeFileSync(config, readFileSync(config, 'utf8').replace(TEST_KEYS.acmeRw, TEST_KEYS.acmeRead));
    const r = await cli('apply', join(dir, 'plan.json'), '--config', config, '--output', 'json');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(SCOPE_LINE);
    expect(JSON.parse(r.stdout)).toMatchObject({ result: 'failed', exit_code: 1 });
    expect(await writeCalls(emulator)).toBe(1);
    const db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    try {
      expect(new RunHistory(db).recent(1).map((row) => [row.trigger, row.result, row.exitCode])).toEqual([['apply', 'failed', 1]]);
    } finally {
      db.close();
    }
  });

  it('the daemon counts it as a failure: /readyz not ready, /status and the metrics say failed, and the alerts fire', async () => {
    // A first sync with the read-write key, then HR changes and the daemon runs with a read-only key.
    const rw = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw });
    expect((await cli('sync', '--config', rw)).code).toBe(0);
    writeCsvOrg(dir, TREE, { u2: 'Lead' });
    writeFileSync(rw, readFileSync(rw, 'utf8').replace(TEST_KEYS.acmeRw, TEST_KEYS.acmeRead).replace('log:\n', 'metrics:\n  listen: 127.0.0.1:0\nlog:\n'));
    const cap = captureContext();
    let url = '';
    const exit = daemonMain(loadConfig(rw, {}), cap.ctx, '127.0.0.1:0', { scheduler: new ManualScheduler(30 * 60_000), onListening: (u) => (url = u) });
    try {
      await until('the listener', () => (url ? true : undefined));
      const [run] = await until('the first run', async () => {
        const runs = (await getJson(`${url}/status`)).body.runs as StatusRun[];
        return runs.length >= 2 && runs[0]!.result !== 'running' ? runs : undefined;
      });
      expect(run).toMatchObject({ trigger: 'start', result: 'failed' });
      expect(run!.error).toMatch(/^the platform credential lacks the scope tenant\.org\.write \(.*\): stopped after 0 writes$/);
      const ready = await getJson(`${url}/readyz`);
      expect(ready.status).toBe(503);
      expect((ready.body as { checks: Record<string, string> }).checks.last_run).toMatch(/^failed: the platform credential lacks the scope tenant\.org\.write .*\(not ready until a run succeeds\)$/);

      const metrics = await (await fetch(`${url}/metrics`)).text();
      // Every series carries sync_id="hr-sync" besides its own labels.
      const sample = (name: string, label = ''): number => Number(new RegExp(`^${name}\\{[^}]*${label}[^}]*\\} (\\S+)$`, 'm').exec(metrics)?.[1]);
      expect(sample('orgsync_runs_total', 'result="failed"')).toBe(1);
      expect(sample('orgsync_runs_total', 'result="partial"')).toBe(0);
      expect(sample('orgsync_runs_total', 'result="success"')).toBe(0);
      expect(sample('orgsync_apply_stops_total', 'reason="scope_denied"')).toBe(1);
      const lastRun = sample('orgsync_last_run_timestamp_seconds');
      const lastSuccess = sample('orgsync_last_success_timestamp_seconds');
      expect(lastSuccess).toBeGreaterThan(0);
      expect(lastRun).toBeGreaterThan(lastSuccess);

      const bin = requireTool('promtool');
      if (!bin) throw new Error('promtool is required for the alert rule test (apt-get install prometheus)');
      // The run's two gauges as they were exported, shifted together so that the last success is at t=60s.
      const work = tempDir('orgsync-scope-alerts-');
      try {
        writeFileSync(join(work, 'alerts.rendered.yaml'), renderAlerts(values()));
        writeFileSync(join(work, 'scope.test.yaml'), alertTests(60 + (lastRun - lastSuccess), 60));
        const r = promtool(bin, ['test', 'rules', join(work, 'scope.test.yaml')]);
        expect(r.output).toContain('SUCCESS');
        expect(r.status).toBe(0);
        // The same test fails when the run is counted a success (the test can fail).
        writeFileSync(join(work, 'scope.test.yaml'), alertTests(60 + (lastRun - lastSuccess), 60 + (lastRun - lastSuccess)));
        expect(promtool(bin, ['test', 'rules', join(work, 'scope.test.yaml')]).status).not.toBe(0);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    } finally {
      cap.shutdown.abort(new Error('test over'));
      expect(await exit).toBe(0);
    }
  });
});

/** promtool unit tests: with these last-run and last-success values held, OrgsyncSyncFailing and OrgsyncNoRecentSuccess fire. */
function alertTests(lastRun: number, lastSuccess: number): string {
  return `rule_files:
  - alerts.rendered.yaml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'orgsync_last_run_timestamp_seconds{job="orgsync",instance="hr-sync",sync_id="hr-sync"}'
        values: '${lastRun}x120'
      - series: 'orgsync_last_success_timestamp_seconds{job="orgsync",instance="hr-sync",sync_id="hr-sync"}'
        values: '${lastSuccess}x120'
    alert_rule_test:
      - eval_time: 15m
        alertname: OrgsyncSyncFailing
        exp_alerts:
          - exp_labels: { severity: critical, job: orgsync, instance: hr-sync, sync_id: hr-sync }
            exp_annotations:
              summary: orgsync runs are failing
              description: 'The last orgsync run of orgsync/hr-sync did not succeed; see /status or the logs (run_id) for the error.'
      - eval_time: 62m
        alertname: OrgsyncNoRecentSuccess
        exp_alerts:
          - exp_labels: { severity: critical, job: orgsync, instance: hr-sync, sync_id: hr-sync }
            exp_annotations:
              summary: orgsync has not synced successfully for twice the schedule interval
              description: 'No successful orgsync run of orgsync/hr-sync for 1h 1m 0s.'
`;
}
