/**
 * A local clock that jumps: wall time (`now`) is the host's plus an offset that a test moves forward or back,
 * as NTP steps, a resumed VM or an operator's `date -s` would; the monotonic source and sleeps are not moved.
 * Reusable by any fault test that needs "the clock moved +1 h and back".
 */
import { systemClock, type Clock } from '../../src/shared/clock.js';

export class JumpClock implements Clock {
  private offset = 0;

  constructor(private readonly base: () => number = Date.now) {}

  now(): number {
    return this.base() + this.offset;
  }

  /** A monotonic reading that no jump affects (what performance.now() is to the host). */
  monotonic(): number {
    return this.base();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return systemClock.sleep(ms, signal);
  }

  /** Moves the wall clock by `ms` (negative: back). */
  jump(ms: number): void {
    this.offset += ms;
  }

  /** Puts the wall clock back to the host's time. */
  reset(): void {
    this.offset = 0;
  }
}
