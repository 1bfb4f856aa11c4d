import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrgsyncMetrics } from '../../src/observability/metrics.js';
import { startOpsServer, type OpsServer } from '../../src/observability/http-server.js';
import { promtool, requireTool } from './tools.js';

/** The metric names issue 6 item 5 pins (prefix orgsync_), with their exposition types. */
export const PINNED_METRICS: Record<string, 'counter' | 'gauge' | 'histogram'> = {
  orgsync_runs_total: 'counter',
  orgsync_run_duration_seconds: 'histogram',
  orgsync_last_run_timestamp_seconds: 'gauge',
  orgsync_last_success_timestamp_seconds: 'gauge',
  orgsync_plan_operations: 'gauge',
  orgsync_operations_total: 'counter',
  orgsync_api_requests_total: 'counter',
  orgsync_api_request_duration_seconds: 'histogram',
  orgsync_api_rate_limited_total: 'counter',
  orgsync_api_throttled_seconds_total: 'counter',
  orgsync_api_retries_total: 'counter',
  orgsync_mirror_watermark_age_seconds: 'gauge',
  orgsync_removals_blocked_total: 'counter',
  orgsync_source_records: 'gauge',
  orgsync_quarantined_records: 'gauge',
  orgsync_blocked_records: 'gauge',
  orgsync_mirror_records: 'gauge',
  orgsync_delete_threshold_exceeded_total: 'counter',
  orgsync_build_info: 'gauge',
};

describe('metrics on the ops listener', () => {
  const now = Date.UTC(2026, 10, 22, 12, 0, 0);
  const metrics = new OrgsyncMetrics({ build: { version: '9.9.9' }, now: () => now });
  let server: OpsServer;
  let ready = true;

  beforeAll(async () => {
    metrics.setMirrorProbe({
      watermarks: () => ({ department: now - 90_000, member: now - 30_000, position: undefined }),
      records: () => [
        { entity: 'member', status: 'active', count: 250 },
        { entity: 'member', status: 'left', count: 3 },
        { entity: 'department', status: 'active', count: 30 },
      ],
    });
    const observer = metrics.clientObserver();
    observer.onResponse('GET', '/api/external/v1/org/members', 200, 0.012);
    observer.onResponse('POST', '/api/external/v1/org/members', 429, 0.003);
    observer.onRateLimited();
    observer.onRetry('rate_limited');
    observer.onThrottled(1.5);
    metrics.recordRun('success', now - 12_000, now);
    // Issue 15: a later dry run is counted, but moves neither timestamp (nor would it trip OrgsyncSyncFailing).
    metrics.recordRun('dry_run', now - 2_000, now + 60_000);
    OrgsyncMetrics.replace(metrics.planOperations, [{ labels: { entity: 'member', op: 'create' }, value: 250 }]);
    metrics.operationsTotal.inc({ entity: 'member', op: 'create', result: 'ok' }, 250);
    metrics.removalsBlockedTotal.inc({ guard: 'delete_threshold' });
    OrgsyncMetrics.replace(metrics.sourceRecords, [{ labels: { source: 'hr', entity: 'member' }, value: 252 }]);
    OrgsyncMetrics.replace(metrics.quarantinedRecords, [{ labels: { source: 'hr', reason: 'invalid_email' }, value: 2 }]);
    server = await startOpsServer('127.0.0.1:0', {
      registry: metrics.registry,
      readiness: () => ({ ready, checks: { config: 'ok', state_db: ready ? 'ok' : 'closed' } }),
      status: () => ({ runs: [] }),
    });
  });
  afterAll(async () => server?.close());

  it('serves every pinned metric with its type, plus build_info and default process metrics', async () => {
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    for (const [name, type] of Object.entries(PINNED_METRICS)) expect(text).toContain(`# TYPE ${name} ${type}\n`);
    expect(text).toContain('orgsync_build_info{version="9.9.9",node_version="');
    expect(text).toContain('orgsync_runs_total{result="success"} 1');
    expect(text).toContain('orgsync_runs_total{result="failed"} 0');
    expect(text).toContain('orgsync_runs_total{result="dry_run"} 1');
    expect(text).toContain(`orgsync_last_run_timestamp_seconds ${now / 1000}`);
    expect(text).toContain(`orgsync_last_success_timestamp_seconds ${now / 1000}`);
    expect(text).toContain('orgsync_api_requests_total{method="POST",route="/api/external/v1/org/members",status="429"} 1');
    expect(text).toContain('orgsync_api_throttled_seconds_total 1.5');
    expect(text).toContain('orgsync_mirror_watermark_age_seconds{entity="department"} 90');
    expect(text).not.toContain('orgsync_mirror_watermark_age_seconds{entity="position"}');
    expect(text).toContain('orgsync_mirror_records{entity="member",status="active"} 250');
    expect(text).toContain('# TYPE orgsync_process_cpu_seconds_total counter');
    // Nothing unprefixed: every sample belongs to orgsync.
    const names = text.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split(/[{ ]/)[0]!);
    expect(names.filter((n) => !n.startsWith('orgsync_'))).toEqual([]);
  });

  const promtoolBin = requireTool('promtool');
  it.skipIf(!promtoolBin)('passes promtool check metrics', async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const r = promtool(promtoolBin!, ['check', 'metrics'], text);
    expect(r.output).toBe('');
    expect(r.status).toBe(0);
  });

  it('answers /healthz, /readyz (200 then 503), /status and 404', async () => {
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: 'ok' });
    let res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { config: 'ok', state_db: 'ok' } });
    ready = false;
    res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'not ready', checks: { config: 'ok', state_db: 'closed' } });
    ready = true;
    expect(await (await fetch(`${server.url}/status`)).json()).toEqual({ runs: [] });
    res = await fetch(`${server.url}/nope`);
    expect(res.status).toBe(404);
    res = await fetch(`${server.url}/metrics`, { method: 'POST' });
    expect(res.status).toBe(405);
  });

  it('a listen address in use is one clear config error (exit 2)', async () => {
    const listen = `127.0.0.1:${server.port}`;
    const err = await startOpsServer(listen, { registry: metrics.registry, readiness: () => ({ ready: true, checks: {} }), status: () => ({}) }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CONFIG_INVALID', exitCode: 2, message: `metrics.listen: cannot listen on ${listen}: EADDRINUSE` });
  });
});
