import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { daemonMain } from '../../src/cli/commands/daemon.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { demoSeed, demoWorkspace, getJson, until, type StatusRun } from '../daemon/support.js';
import { captureContext } from '../helpers/cli.js';
import { startPrometheus, type TestPrometheus } from './prometheus.js';
import { promtool, requireTool } from './tools.js';

const prometheusBin = requireTool('prometheus');
const promtoolBin = requireTool('promtool');

describe.skipIf(!prometheusBin || !promtoolBin)('a real Prometheus scraping a running daemon synced against the emulator', { timeout: 180_000 }, () => {
  let emulator: TestEmulator;
  let prometheus: TestPrometheus | undefined;
  let url = '';
  const cap = captureContext();
  let exit: Promise<number>;

  beforeAll(async () => {
    emulator = await startTestEmulator(demoSeed());
    const dir = demoWorkspace({ url: emulator.url });
    const config = loadConfig(join(dir, 'orgsync.yaml'), {});
    exit = daemonMain(config, cap.ctx, '127.0.0.1:0', { scheduler: new ManualScheduler(), onListening: (u) => (url = u) });
    await until('the daemon listener', () => (url ? true : undefined));
    prometheus = await startPrometheus(prometheusBin!, new URL(url).host);
  }, 180_000);
  afterAll(async () => {
    await prometheus?.stop();
    cap.shutdown.abort();
    await exit;
    await emulator?.close();
  });

  it('reads orgsync_last_success_timestamp_seconds back through the Prometheus HTTP API', async () => {
    const runs = await until('the first run to finish', async () => {
      const list = (await getJson(`${url}/status`)).body.runs as StatusRun[];
      return list[0] && list[0].result !== 'running' ? list : undefined;
    });
    expect(runs[0]!.result).toBe('success');
    const lastSuccessAt = Date.parse((await getJson(`${url}/status`)).body.last_success_at as string) / 1000;

    const sample = await prometheus!.waitFor('a scraped success timestamp', async () => {
      const result = await prometheus!.query('orgsync_last_success_timestamp_seconds{job="orgsync"}');
      const v = result[0] ? Number(result[0].value[1]) : 0;
      return v > 0 ? result[0] : undefined;
    });
    expect(Number(sample.value[1])).toBeCloseTo(lastSuccessAt, 3);
    expect(sample.metric).toMatchObject({ job: 'orgsync', __name__: 'orgsync_last_success_timestamp_seconds', sync_id: 'daemon-e2e' });
    const up = await prometheus!.query('up{job="orgsync"}');
    expect(up.map((s) => s.value[1])).toEqual(['1']);
    const runsTotal = await prometheus!.query('sum(orgsync_runs_total{job="orgsync",result="success"})');
    expect(runsTotal[0]!.value[1]).toBe('1');
  });

  it('the live daemon /metrics page passes promtool check metrics', async () => {
    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).toContain('orgsync_operations_total{entity="members",op="create",result="applied",sync_id="daemon-e2e"}');
    const r = promtool(promtoolBin!, ['check', 'metrics'], text);
    expect(r.output).toBe('');
    expect(r.status).toBe(0);
  });
});
