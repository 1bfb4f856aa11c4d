import { describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../src/shared/clock.js';

describe('ManualClock', () => {
  it('wakes sleepers in deadline order only when time passes their deadline', async () => {
    const clock = new ManualClock(1_000);
    const woke: string[] = [];
    void clock.sleep(300).then(() => woke.push('b'));
    void clock.sleep(100).then(() => woke.push('a'));
    await clock.advance(99);
    expect(woke).toEqual([]);
    await clock.advance(1);
    expect(woke).toEqual(['a']);
    expect(clock.now()).toBe(1_100);
    await clock.advance(500);
    expect(woke).toEqual(['a', 'b']);
    expect(clock.now()).toBe(1_600);
  });

  it('rejects a sleep when its signal aborts, and forgets the sleeper', async () => {
    const clock = new ManualClock();
    const ac = new AbortController();
    const p = clock.sleep(1_000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(clock.pending).toBe(0);
  });

  it('never goes backwards', () => {
    const clock = new ManualClock(5);
    expect(() => clock.set(4)).toThrow('backwards');
  });
});

describe('systemClock', () => {
  it('rejects at once for an already aborted signal', async () => {
    const ac = new AbortController();
    ac.abort(new Error('aborted'));
    await expect(systemClock.sleep(10_000, ac.signal)).rejects.toThrow('aborted');
  });
});
