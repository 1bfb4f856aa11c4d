/**
 * One log line per burst of the same refused request (issue 44): a scanner, a misconfigured webhook or an empty token
 * file would otherwise write a line per request and flood the log pipeline. The first refusal of a burst is logged;
 * the next ones are counted until `quietMs` pass without one, and the first line of the next burst says how many
 * there were. The metrics (orgsync_http_unauthorized_total, orgsync_trigger_unauthorized_total) count every one.
 */
import type { Clock } from '../shared/clock.js';
import { monotonicNow, systemClock } from '../shared/clock.js';

/** How long without a refusal ends a burst. */
export const BURST_QUIET_MS = 60_000;

/** Logs the first event of each burst, with the number of events left unlogged since the previous line. */
export class BurstLog {
  private lastAt = Number.NEGATIVE_INFINITY;
  private unlogged = 0;

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly quietMs = BURST_QUIET_MS,
  ) {}

  /** Counts one event; calls `log` when it opens a burst, with how many events went unlogged before it. */
  hit(log: (unloggedBefore: number) => void): void {
    const now = monotonicNow(this.clock);
    const opens = now - this.lastAt > this.quietMs;
    this.lastAt = now;
    if (!opens) {
      this.unlogged += 1;
      return;
    }
    const before = this.unlogged;
    this.unlogged = 0;
    log(before);
  }
}
