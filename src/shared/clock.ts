/**
 * Time as a dependency: production uses the system clock, tests inject a manual one.
 *
 * Two readings: `now()` is wall time (dates that are stored, compared across processes or shown: lease expiry,
 * grace periods, lifecycle dates, run times); `monotonic()` never jumps when the wall clock is stepped (NTP, a
 * resumed VM, `date -s`) and measures durations inside this process: pacing, retry budgets, request times.
 * Use `monotonicNow(clock)` and `steadyWallClock(clock)` rather than calling it directly.
 */
import { onAbort } from './abort-waiters.js';

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Milliseconds from an arbitrary origin, never going back or jumping with the wall clock; absent: `now()`. */
  monotonic?(): number;
}

/** The clock's monotonic reading (its wall time when it has none). */
export function monotonicNow(clock: Clock): number {
  return clock.monotonic ? clock.monotonic() : clock.now();
}

/**
 * Wall time that does not jump: the clock's wall time read once, then advanced by its monotonic source. For
 * times this process writes and later compares itself against, such as the lease's expiry: a wall clock stepped
 * back an hour would otherwise write an expiry already past (shortening the lease for every other process) and
 * keep believing its own lease valid an hour too long; stepped forward, the reverse.
 */
export function steadyWallClock(clock: Clock): () => number {
  if (!clock.monotonic) return () => clock.now();
  const wall0 = clock.now();
  const mono0 = clock.monotonic();
  // Whole milliseconds, as Date.now() gives: callers store it in INTEGER columns (the lease's STRICT table).
  return () => wall0 + Math.floor(clock.monotonic!() - mono0);
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        leave?.();
        resolve();
      }, Math.max(0, ms));
      const leave = signal
        ? onAbort(signal, () => {
            clearTimeout(timer);
            reject(signal.reason);
          })
        : undefined;
    }),
};

/**
 * A clock that only moves when told to. Sleepers wake in deadline order as `advance()` passes their deadline,
 * so backoff and schedules are tested without real waiting.
 */
export class ManualClock implements Clock {
  private current: number;
  private sleepers: { until: number; resolve: () => void }[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  /** A manual clock never goes back: its wall time is its monotonic time. */
  monotonic(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const entry = { until: this.current + Math.max(0, ms), resolve };
      this.sleepers.push(entry);
      if (signal)
        onAbort(signal, () => {
          this.sleepers = this.sleepers.filter((s) => s !== entry);
          reject(signal.reason);
        });
    });
  }

  /** Moves time forward by `ms`, waking every sleeper whose deadline has passed. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      this.sleepers.sort((a, b) => a.until - b.until);
      const next = this.sleepers[0];
      if (!next || next.until > target) break;
      this.sleepers.shift();
      this.current = next.until;
      next.resolve();
      // Let the woken code run before waking the next sleeper.
      await new Promise((r) => setImmediate(r));
    }
    this.current = target;
  }

  /** Sets the time directly (never backwards). */
  set(ms: number): void {
    if (ms < this.current) throw new Error('ManualClock cannot go backwards');
    this.current = ms;
  }

  /** How many sleepers are waiting. */
  get pending(): number {
    return this.sleepers.length;
  }
}
