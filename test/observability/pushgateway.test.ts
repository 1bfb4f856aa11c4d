import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { RunHistory } from '../../src/mirror/runs.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { demoSeed, demoWorkspace } from '../daemon/support.js';
import { captureContext } from '../helpers/cli.js';

describe('orgsync sync with metrics.pushgateway_url', { timeout: 180_000 }, () => {
  let emulator: TestEmulator | undefined;
  let gateway: Server | undefined;
  afterAll(async () => {
    await emulator?.close();
    await new Promise((r) => (gateway ? gateway.close(r) : r(undefined)));
  });

  it('pushes the run\'s metrics at the end (PUT /metrics/job/orgsync/instance/<sync id>/sync_id/<sync id>), every one labelled sync_id, and records the run', async () => {
    const pushes: { method: string; url: string; body: string }[] = [];
    gateway = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        pushes.push({ method: req.method ?? '', url: req.url ?? '', body });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => gateway!.listen(0, '127.0.0.1', r));
    emulator = await startTestEmulator(demoSeed());
    const pushUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
    const dir = demoWorkspace({ url: emulator.url, extra: '' });
    const file = join(dir, 'orgsync.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('metrics:\n  listen: 127.0.0.1:0\n', `metrics:\n  listen: 127.0.0.1:0\n  pushgateway_url: ${pushUrl}\n`));

    const cap = captureContext();
    expect(await main(['sync', '--config', file], cap.ctx)).toBe(0);
    expect(pushes).toHaveLength(1);
    expect(pushes[0]).toMatchObject({ method: 'PUT', url: '/metrics/job/orgsync/instance/daemon-e2e/sync_id/daemon-e2e' });
    const body = pushes[0]!.body;
    expect(body).toContain('orgsync_runs_total{result="success",sync_id="daemon-e2e"} 1');
    expect(body).toMatch(/orgsync_last_success_timestamp_seconds\{sync_id="daemon-e2e"\} \d+/);
    expect(body).toContain('orgsync_operations_total{entity="members",op="create",result="applied",sync_id="daemon-e2e"} 304');
    expect(body).toContain('orgsync_plan_operations{entity="departments",op="create",sync_id="daemon-e2e"} 36');
    expect(body).toContain('orgsync_source_records{source="hris",entity="members",sync_id="daemon-e2e"} 60');
    // Every sample of the push carries the tenant.
    const samples = body.split('\n').filter((l) => l.startsWith('orgsync_'));
    expect(samples.length).toBeGreaterThan(50);
    expect(samples.filter((l) => !l.includes('sync_id="daemon-e2e"'))).toEqual([]);
    expect(cap.out.stderr).toContain('"msg":"metrics pushed to the Pushgateway"');

    const db = openStateDb(join(dir, 'state/orgsync.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const [run] = new RunHistory(db).recent(1);
    db.close();
    expect(run).toMatchObject({ trigger: 'once', result: 'success', summary: { writes: 417 } });
    // One run_id on every line of the run (logs on stderr: stdout carries the summary), the id the history records.
    const lines = cap.out.stderr.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const runLines = lines.filter((l) => ['source read', 'plan computed', 'change applied'].includes(String(l.msg)));
    expect(runLines.length).toBeGreaterThan(400);
    expect(new Set(runLines.map((l) => l.run_id))).toEqual(new Set([run!.id]));
  });

  it('a Pushgateway that is down is a warning, not a failed run', async () => {
    await emulator?.close();
    emulator = await startTestEmulator(demoSeed());
    const dir = demoWorkspace({ url: emulator.url });
    const file = join(dir, 'orgsync.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('metrics:\n  listen: 127.0.0.1:0\n', 'metrics:\n  listen: 127.0.0.1:0\n  pushgateway_url: http://127.0.0.1:9\n'));
    const cap = captureContext();
    expect(await main(['sync', '--config', file], cap.ctx)).toBe(0);
    expect(cap.out.stderr).toContain('"msg":"could not push metrics to the Pushgateway"');
  });
});
