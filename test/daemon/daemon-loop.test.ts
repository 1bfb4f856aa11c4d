import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.js';
import { silentLogger, type Logger } from '../../src/shared/logger.js';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { RunHistory } from '../../src/mirror/runs.js';
import { OrgsyncMetrics } from '../../src/observability/metrics.js';
import { runDaemon, type RunContext, type RunOutcome } from '../../src/daemon/daemon.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';

/** A run the test finishes by hand. */
interface PendingRun {
  ctx: RunContext;
  finish(outcome: RunOutcome): void;
}

function harness(options: { clock?: ManualClock; graceMs?: number } = {}) {
  const clock = options.clock ?? new ManualClock(Date.UTC(2026, 10, 22, 9, 0, 0));
  const scheduler = new ManualScheduler(30 * 60_000);
  const history = new RunHistory(openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS }));
  const metrics = new OrgsyncMetrics({ build: { version: 'test' }, defaultMetrics: false });
  const shutdown = new AbortController();
  const runs: PendingRun[] = [];
  const waiters: (() => void)[] = [];
  let url = '';
  let n = 0;
  const lines: { level: string; obj: object; msg?: string }[] = [];
  const logger: Logger = {
    ...silentLogger,
    info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
    child: () => logger,
  };
  const exit = runDaemon({
    runSync: (ctx) =>
      new Promise<RunOutcome>((resolve) => {
        runs.push({ ctx, finish: resolve });
        waiters.splice(0).forEach((w) => w());
      }),
    logger,
    metrics,
    history,
    scheduler,
    clock,
    listen: '127.0.0.1:0',
    shutdownSignal: shutdown.signal,
    stateOpen: () => true,
    info: { syncId: 'orgsync', version: 'test', schedule: '*/30 * * * *', timezone: 'UTC' },
    shutdownGraceMs: options.graceMs ?? 20_000,
    onListening: (u) => (url = u),
    newRunId: () => `run-${++n}`,
  });
  /** Resolves once `count` runs have started. */
  const started = async (count: number) => {
    while (runs.length < count) await new Promise<void>((r) => waiters.push(r));
    return runs[count - 1]!;
  };
  const settle = () => new Promise((r) => setImmediate(r));
  const get = async (path: string) => {
    const res = await fetch(`${url}${path}`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return { clock, scheduler, history, metrics, shutdown, runs, exit, started, settle, get, lines };
}

describe('daemon loop', () => {
  it('runs at start and on each tick, never two at once, and reports them on /status', async () => {
    const h = harness();
    const first = await h.started(1);
    expect(first.ctx.trigger).toBe('start');
    await h.settle();
    // A tick while the first run is running is skipped, not queued.
    expect(h.scheduler.tick()).toBe(true);
    expect(h.runs).toHaveLength(1);
    expect(h.lines.some((l) => l.msg === 'scheduled run skipped: the previous run is still running')).toBe(true);
    first.finish({ result: 'success', exitCode: 0, summary: { writes: 12 } });
    await h.settle();
    h.scheduler.tick();
    const second = await h.started(2);
    expect(second.ctx.trigger).toBe('schedule');
    await h.clock.advance(60_000);
    second.finish({ result: 'success', exitCode: 0, summary: { writes: 0 } });
    await h.settle();
    const status = await h.get('/status');
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ sync_id: 'orgsync', state: 'idle', skipped_ticks: 1, current_run: null });
    const runs = status.body.runs as { id: string; result: string; trigger: string; summary: unknown; durationSeconds: number }[];
    expect(runs.map((r) => [r.id, r.trigger, r.result])).toEqual([['run-2', 'schedule', 'success'], ['run-1', 'start', 'success']]);
    expect(runs[0]).toMatchObject({ summary: { writes: 0 }, durationSeconds: 60 });
    const text = await h.metrics.text();
    expect(text).toContain('orgsync_runs_total{result="success"} 2');
    h.shutdown.abort(new Error('received SIGTERM'));
    expect(await h.exit).toBe(0);
  });

  it('/healthz is always ok; /readyz turns 503 once runs have failed for more than twice the interval', async () => {
    const h = harness();
    const first = await h.started(1);
    expect((await h.get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await h.get('/readyz')).status).toBe(200);
    first.finish({ result: 'failed', exitCode: 1, error: 'platform unreachable' });
    await h.settle();
    // Failing, but not yet for longer than 2 x 30 min.
    await h.clock.advance(59 * 60_000);
    expect((await h.get('/readyz')).status).toBe(200);
    await h.clock.advance(2 * 60_000);
    const r = await h.get('/readyz');
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ status: 'not ready', checks: { config: 'ok', state_db: 'ok', last_run: 'failing for 3660s (more than twice the schedule interval): platform unreachable' } });
    // A success makes it ready again.
    h.scheduler.tick();
    (await h.started(2)).finish({ result: 'success', exitCode: 0 });
    await h.settle();
    expect((await h.get('/readyz')).status).toBe(200);
    h.shutdown.abort();
    expect(await h.exit).toBe(0);
  });

  it('/readyz is not ready at once after a run the platform refused the credential of, until a later run succeeds (issue 15)', async () => {
    const h = harness();
    (await h.started(1)).finish({ result: 'failed', exitCode: 1, error: 'the platform credential lacks the scope tenant.org.write (scope_denied): stopped after 0 writes', persistent: true });
    await h.settle();
    const r = await h.get('/readyz');
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ status: 'not ready', checks: { config: 'ok', state_db: 'ok', last_run: 'failed: the platform credential lacks the scope tenant.org.write (scope_denied): stopped after 0 writes (not ready until a run succeeds)' } });
    // A `sync --dry-run` on the same state DB (a row marked dry_run) says nothing about the health of the sync.
    h.history.start('dry-1', 'once', h.clock.now());
    h.history.finish('dry-1', { finishedAt: h.clock.now(), result: 'dry_run', exitCode: 0, summary: { result: 'dry_run', dry_run: true } });
    expect((await h.get('/readyz')).status).toBe(503);
    expect((await h.get('/status')).body.last_success_at).toBeNull();
    // Still not ready after another such run, and with time passing.
    h.scheduler.tick();
    (await h.started(2)).finish({ result: 'failed', exitCode: 1, error: 'the platform credential lacks the scope tenant.org.write (scope_denied): stopped after 0 writes', persistent: true });
    await h.settle();
    await h.clock.advance(5 * 60_000);
    expect((await h.get('/readyz')).status).toBe(503);
    h.scheduler.tick();
    (await h.started(3)).finish({ result: 'success', exitCode: 0 });
    await h.settle();
    expect((await h.get('/readyz')).status).toBe(200);
    h.shutdown.abort();
    expect(await h.exit).toBe(0);
  });

  it('on SIGTERM stops scheduling, lets the run in flight finish and records it, then exits 0', async () => {
    const h = harness();
    const run = await h.started(1);
    await h.settle();
    h.shutdown.abort(new Error('received SIGTERM'));
    await h.settle();
    expect(run.ctx.stopSignal.aborted).toBe(true);
    expect(run.ctx.killSignal.aborted).toBe(false);
    // No more runs after the signal.
    expect(h.scheduler.tick()).toBe(false);
    run.finish({ result: 'interrupted', exitCode: 0, summary: { applied: 3, skipped: 40 } });
    expect(await h.exit).toBe(0);
    expect(h.history.recent(1)[0]).toMatchObject({ id: 'run-1', result: 'interrupted', summary: { applied: 3, skipped: 40 } });
    expect(h.runs).toHaveLength(1);
  });

  it('abandons a run that outlives the grace period (kill signal) and still exits 0', async () => {
    const clock = new ManualClock();
    const h = harness({ clock, graceMs: 20_000 });
    const run = await h.started(1);
    h.shutdown.abort();
    await h.settle();
    await clock.advance(20_000);
    expect(run.ctx.killSignal.aborted).toBe(true);
    await clock.advance(2_000);
    expect(await h.exit).toBe(0);
    expect(h.lines.some((l) => l.msg === 'the run did not finish within the grace period; abandoning it')).toBe(true);
  });

  it('a restarted daemon exports the last run and the last success from the run history before its first run ends', async () => {
    const db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const history = new RunHistory(db);
    history.start('old-ok', 'schedule', 1_000_000);
    history.finish('old-ok', { finishedAt: 1_060_000, result: 'success', exitCode: 0 });
    history.start('old-bad', 'schedule', 2_000_000);
    history.finish('old-bad', { finishedAt: 2_030_000, result: 'failed', exitCode: 1, error: 'boom' });
    const metrics = new OrgsyncMetrics({ build: { version: 'test' }, defaultMetrics: false });
    const shutdown = new AbortController();
    let release: (o: RunOutcome) => void = () => undefined;
    const exit = runDaemon({
      runSync: () => new Promise<RunOutcome>((r) => (release = r)),
      logger: silentLogger,
      metrics,
      history,
      scheduler: new ManualScheduler(),
      clock: new ManualClock(3_000_000),
      listen: '',
      shutdownSignal: shutdown.signal,
      stateOpen: () => true,
      info: { syncId: 's', version: 'test', schedule: '*/30 * * * *', timezone: 'UTC' },
      shutdownGraceMs: 20_000,
    });
    await new Promise((r) => setImmediate(r));
    const text = await metrics.text();
    expect(text).toContain('orgsync_last_success_timestamp_seconds 1060');
    expect(text).toContain('orgsync_last_run_timestamp_seconds 2030');
    shutdown.abort();
    release({ result: 'interrupted', exitCode: 0 });
    expect(await exit).toBe(0);
  });
});
