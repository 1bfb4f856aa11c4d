import { describe, expect, it } from 'vitest';
import { CronScheduler, ManualScheduler } from '../../src/daemon/schedule.js';

describe('schedulers', () => {
  it('CronScheduler knows its interval and reads the expression in its time zone', () => {
    const every30 = new CronScheduler('*/30 * * * *', 'UTC');
    expect(every30.intervalMs()).toBe(30 * 60_000);
    expect(every30.nextRun()).toBeNull();
    const berlin = new CronScheduler('0 9 * * *', 'Europe/Berlin');
    expect(berlin.intervalMs()).toBe(24 * 3600_000);
    berlin.start(() => undefined);
    try {
      const next = berlin.nextRun()!;
      // 09:00 in Berlin is 07:00 or 08:00 UTC, depending on summer time; never 09:00 UTC.
      expect([7, 8]).toContain(next.getUTCHours());
      expect(next.getUTCMinutes()).toBe(0);
      expect(next.getTime()).toBeGreaterThan(Date.now());
    } finally {
      berlin.stop();
    }
    expect(berlin.nextRun()).toBeNull();
  });

  it('ManualScheduler ticks only while started', () => {
    const s = new ManualScheduler(60_000);
    let ticks = 0;
    expect(s.tick()).toBe(false);
    s.start(() => (ticks += 1));
    expect(s.started).toBe(true);
    expect(s.tick()).toBe(true);
    s.stop();
    expect(s.tick()).toBe(false);
    expect(ticks).toBe(1);
    expect(s.intervalMs()).toBe(60_000);
  });
});
