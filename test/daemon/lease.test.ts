import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS, TEST_LEASE_TTL_MS } from '../helpers/state-db.js';
import { MirrorLease } from '../../src/mirror/lease.js';
import { RunHistory } from '../../src/mirror/runs.js';
import { tempDir } from '../helpers/temp.js';

function dbFile(): string {
  return join(tempDir('orgsync-lease-'), 'state.db');
}

describe('lease lock', () => {
  it('refuses a second process while the first holds it, naming the holder; free again after release', () => {
    const file = dbFile();
    let now = Date.UTC(2026, 10, 22, 10, 0, 0);
    const a = new MirrorLease(openStateDb(file, { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS }), { now: () => now, ttlMs: TEST_LEASE_TTL_MS, dbPath: file, identity: { hostname: 'h1', pid: 100 }, isAlive: () => true });
    const b = new MirrorLease(openStateDb(file, { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS }), { now: () => now, ttlMs: TEST_LEASE_TTL_MS, dbPath: file, identity: { hostname: 'h1', pid: 200 }, isAlive: () => true });
    a.acquire();
    expect(() => b.acquire()).toThrow(`state DB ${file} is in use by another orgsync process (pid 100 on h1, since 2026-11-22T10:00:00.000Z); only one process may sync a mirror at a time`);
    now += 30_000;
    expect(a.renew()).toBe(true);
    a.release();
    b.acquire();
    expect(b.current()?.pid).toBe(200);
  });

  it('takes over from a dead process on the same host at once (kill -9), and from another host only after expiry', () => {
    const file = dbFile();
    let now = 1_000_000;
    const dead = new MirrorLease(openStateDb(file, { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS }), { now: () => now, ttlMs: TEST_LEASE_TTL_MS, identity: { hostname: 'h1', pid: 100 } });
    dead.acquire();
    const alive = new Set<number>();
    const next = new MirrorLease(openStateDb(file, { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS }), { now: () => now, ttlMs: TEST_LEASE_TTL_MS, identity: { hostname: 'h1', pid: 200 }, isAlive: (pid) => alive.has(pid) });
    next.acquire();
    expect(next.current()?.pid).toBe(200);
    // The first process lost it: renewing tells it so.
    expect(dead.renew()).toBe(false);

    const remote = new MirrorLease(openStateDb(file, { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS }), { now: () => now, ttlMs: 60_000, identity: { hostname: 'h2', pid: 300 }, isAlive: () => false });
    expect(() => remote.acquire()).toThrow('is in use by another orgsync process (pid 200 on h1');
    now += 60_001;
    remote.acquire();
    expect(remote.current()?.hostname).toBe('h2');
  });
});

describe('lease fencing', () => {
  it('verify() holds while the term is this process\'s, and names who took it, or says it expired; an expired term is not renewed', () => {
    const file = dbFile();
    let now = Date.UTC(2026, 10, 22, 10, 0, 0);
    const a = new MirrorLease(openStateDb(file, { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS }), { now: () => now, ttlMs: 3_000, identity: { hostname: 'h1', pid: 100 }, isAlive: () => true });
    const b = new MirrorLease(openStateDb(file, { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS }), { now: () => now, ttlMs: 3_000, identity: { hostname: 'h1', pid: 200 }, isAlive: () => true });
    expect(a.renewEveryMs).toBe(1_000);
    a.acquire();
    expect(a.verify()).toBeUndefined();
    // Frozen past the TTL, nobody took it: the term is over all the same, and renewing does not bring it back.
    now += 3_000;
    expect(a.verify()).toEqual({ holder: 'no one (it expired)', at: now });
    expect(a.renew()).toBe(false);
    expect(a.isHeld).toBe(false);
    // Another process takes it: verify() names it and when.
    now += 500;
    b.acquire();
    expect(a.verify()).toEqual({ holder: b.holder, at: now });
    expect(b.verify()).toBeUndefined();
    // The same process taking it again starts a new term (a new generation); the old release does not free it.
    b.release();
    a.acquire();
    expect(a.verify()).toBeUndefined();
    expect(b.verify()).toEqual({ holder: a.holder, at: now });
    rmSync(dirname(file), { recursive: true, force: true });
  });
});

describe('run history', () => {
  it('records runs newest first, closes abandoned ones, finds the last success, prunes old rows', () => {
    const history = new RunHistory(openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS }), 3);
    history.start('r1', 'start', 1_000);
    history.finish('r1', { finishedAt: 3_000, result: 'success', exitCode: 0, summary: { writes: 5 } });
    history.start('r2', 'schedule', 4_000);
    history.finish('r2', { finishedAt: 5_000, result: 'failed', exitCode: 1, error: 'platform unreachable' });
    history.start('r3', 'schedule', 6_000);
    expect(history.closeAbandoned()).toBe(1);
    const recent = history.recent(10);
    expect(recent.map((r) => [r.id, r.result])).toEqual([['r3', 'interrupted'], ['r2', 'failed'], ['r1', 'success']]);
    expect(recent[2]).toMatchObject({ trigger: 'start', startedAt: new Date(1_000).toISOString(), durationSeconds: 2, exitCode: 0, summary: { writes: 5 }, error: null });
    expect(history.lastWith(['success', 'partial'])?.id).toBe('r1');
    history.start('r4', 'schedule', 7_000);
    history.finish('r4', { finishedAt: 8_000, result: 'success', exitCode: 0 });
    expect(history.recent(10).map((r) => r.id)).toEqual(['r4', 'r3', 'r2']);
  });
});
