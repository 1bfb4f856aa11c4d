/**
 * The emulator's own clock (it shares no code with the sync): the system clock by default, a manual one for tests
 * and for integrators who embed the emulator and want to move its time (token expiry, rate-limit windows).
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, ms));
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/** A clock that only moves when told to; sleepers wake in deadline order as `advance()` passes their deadline. */
export class ManualClock implements Clock {
  private current: number;
  private sleepers: { until: number; resolve: () => void }[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const entry = { until: this.current + Math.max(0, ms), resolve };
      this.sleepers.push(entry);
      signal?.addEventListener(
        'abort',
        () => {
          this.sleepers = this.sleepers.filter((s) => s !== entry);
          reject(signal.reason);
        },
        { once: true },
      );
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
