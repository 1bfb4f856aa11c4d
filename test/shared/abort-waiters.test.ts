/**
 * Issue 42 point 4: waits on one signal add one `abort` listener to it, however many there are (64 requests in flight
 * and paced waits at platform.concurrency 64 used to add 64, past Node's limit of 10 a signal). Each waiter still hears
 * the abort, and one that is done leaves without a trace.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { onAbort } from '../../src/shared/abort-waiters.js';
import { systemClock } from '../../src/shared/clock.js';

describe('onAbort', () => {
  it('64 sleeps on one signal: one listener on it; the abort rejects every sleep with its reason', async () => {
    const controller = new AbortController();
    const sleeps = Array.from({ length: 64 }, () => systemClock.sleep(60_000, controller.signal));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    const reason = new Error('stop');
    controller.abort(reason);
    const settled = await Promise.allSettled(sleeps);
    expect(settled.map((s) => (s.status === 'rejected' ? s.reason : s.status))).toEqual(Array.from({ length: 64 }, () => reason));
  });

  it('a waiter that leaves is not called; the others are, once', () => {
    const controller = new AbortController();
    const calls: string[] = [];
    const leaveA = onAbort(controller.signal, () => calls.push('a'));
    onAbort(controller.signal, () => calls.push('b'));
    leaveA();
    controller.abort();
    controller.abort();
    expect(calls).toEqual(['b']);
  });

  it('finished sleeps leave the signal: a thousand in turn hold no waiter', async () => {
    const controller = new AbortController();
    for (let i = 0; i < 1000; i++) await systemClock.sleep(0, controller.signal);
    let called = 0;
    onAbort(controller.signal, () => (called += 1));
    controller.abort();
    expect(called).toBe(1);
    expect(getEventListeners(controller.signal, 'abort').length).toBeLessThanOrEqual(1);
  });
});
