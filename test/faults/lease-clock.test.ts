/**
 * Issue 21 point 2: a wall clock stepped back or forward never shortens or extends a lease beyond its TTL. The
 * lease keeps its time with steadyWallClock: the wall clock read once, then advanced by the monotonic source.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type Database from 'better-sqlite3';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { MirrorLease } from '../../src/mirror/lease.js';
import { steadyWallClock, type Clock } from '../../src/shared/clock.js';
import { tempDir } from '../helpers/temp.js';

const HOUR = 3_600_000;
const TTL = 60_000;
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);

/** A host whose wall clock can be stepped while its monotonic source runs on. */
class SteppedHost implements Clock {
  wall = T0;
  mono = 5_000;
  now = () => this.wall;
  monotonic = () => this.mono;
  sleep = () => Promise.resolve();
  /** Time passes: both readings move. */
  pass(ms: number): void {
    this.wall += ms;
    this.mono += ms;
  }
  /** The wall clock is stepped (NTP, a resumed VM, date -s); the monotonic source is not. */
  step(ms: number): void {
    this.wall += ms;
  }
}

describe('lease time under a stepped wall clock', () => {
  const dbs: Database.Database[] = [];
  let dir = '';
  afterEach(() => {
    for (const db of dbs.splice(0)) db.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const open = () => {
    dir ||= tempDir('orgsync-lease-clock-');
    const db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    dbs.push(db);
    return db;
  };
  const expiry = (db: Database.Database) => (db.prepare('SELECT expires_at FROM lease').get() as { expires_at: number }).expires_at;

  it('stepped back an hour: the renewal still writes now + TTL in true time (not shortened), and the term ends on time (not extended)', () => {
    const host = new SteppedHost();
    const other = new SteppedHost(); // another process with a correct clock
    const db = open();
    const a = new MirrorLease(db, { now: steadyWallClock(host), ttlMs: TTL, identity: { hostname: 'h1', pid: 1 }, isAlive: () => true });
    const b = new MirrorLease(open(), { now: () => other.wall, ttlMs: TTL, identity: { hostname: 'h2', pid: 2 }, isAlive: () => true });
    a.acquire();
    expect(expiry(db)).toBe(T0 + TTL);

    host.pass(20_000);
    other.pass(20_000);
    host.step(-HOUR);
    expect(a.renew()).toBe(true);
    // With the raw wall clock this would be T0 - 1 h + 80 s: already past for every other process.
    expect(expiry(db)).toBe(T0 + 20_000 + TTL);
    other.pass(TTL - 1_000);
    expect(() => b.acquire()).toThrow(/in use by another orgsync process/);

    // a freezes (no renewal): its term ends TTL after the last renewal, by its own reckoning too, not an hour later.
    host.pass(TTL + 1_000);
    expect(a.verify()).toEqual({ holder: 'no one (it expired)', at: T0 + 20_000 + TTL });
    other.pass(2_000);
    b.acquire();
    expect(b.isHeld).toBe(true);
  });

  it('on the real clocks (fractional monotonic readings) the lease stores whole milliseconds', () => {
    const db = open();
    const a = new MirrorLease(db, { ttlMs: TTL });
    a.acquire();
    expect(a.renew()).toBe(true);
    expect(Number.isInteger(expiry(db))).toBe(true);
    expect(Math.abs(expiry(db) - (Date.now() + TTL))).toBeLessThan(5_000);
    a.release();
  });

  it('stepped forward an hour: the renewal does not push the expiry an hour out (not extended)', () => {
    const host = new SteppedHost();
    const other = new SteppedHost();
    const db = open();
    const a = new MirrorLease(db, { now: steadyWallClock(host), ttlMs: TTL, identity: { hostname: 'h1', pid: 1 }, isAlive: () => true });
    const b = new MirrorLease(open(), { now: () => other.wall, ttlMs: TTL, identity: { hostname: 'h2', pid: 2 }, isAlive: () => true });
    a.acquire();
    host.pass(20_000);
    other.pass(20_000);
    host.step(HOUR);
    expect(a.renew()).toBe(true);
    // The raw wall clock would write T0 + 1 h + 80 s and lock everyone else out for an hour after a freeze.
    expect(expiry(db)).toBe(T0 + 20_000 + TTL);
    other.pass(TTL + 1_000);
    b.acquire();
    expect(a.verify()).toMatchObject({ holder: b.holder });
    expect(dirname(db.name)).toBe(dir);
  });
});
