import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createProgressReporter, PROGRESS_LOG_INTERVAL_MS } from '../../src/cli/commands/sync-progress.js';
import type { Change } from '../../src/domain/index.js';
import type { Logger } from '../../src/shared/logger.js';

const change = { id: 'x', entity: 'members', op: 'create', thirdId: 'x', description: '', reason: '', fields: {}, dependsOn: [] } as Change;

function capture(): { logger: Logger; lines: { obj: object; msg?: string }[] } {
  const lines: { obj: object; msg?: string }[] = [];
  const logger: Logger = {
    trace: () => {},
    debug: () => {},
    info: (obj, msg) => lines.push({ obj, ...(msg ? { msg } : {}) }),
    warn: () => {},
    error: () => {},
    child: () => logger,
  };
  return { logger, lines };
}

afterEach(() => vi.useRealTimers());

describe('sync progress', () => {
  it('without a terminal, logs done/total, rate and ETA every 5 seconds', () => {
    vi.useFakeTimers();
    let now = 0;
    const { logger, lines } = capture();
    const p = createProgressReporter({ tty: false, stream: new PassThrough(), logger, now: () => now });
    p.observer.onApplyStart!(100);
    for (let i = 0; i < 25; i++) p.observer.onChangeResult!({ change, status: 'applied' });
    now = 5_000;
    vi.advanceTimersByTime(PROGRESS_LOG_INTERVAL_MS);
    expect(lines).toEqual([{ obj: { done: 25, total: 100, failed: 0, rate_per_second: 5, eta_seconds: 15 }, msg: 'sync progress' }]);
    p.stop();
    vi.advanceTimersByTime(PROGRESS_LOG_INTERVAL_MS * 3);
    expect(lines).toHaveLength(1);
  });

  it('on a terminal, rewrites one progress line with done/total, rate and ETA', () => {
    let now = 0;
    const stream = new PassThrough();
    let out = '';
    stream.on('data', (c: Buffer) => (out += c.toString()));
    const p = createProgressReporter({ tty: true, stream, logger: capture().logger, now: () => now });
    p.observer.onApplyStart!(4);
    now = 1_000;
    for (let i = 0; i < 4; i++) p.observer.onChangeResult!({ change, status: i === 3 ? 'failed' : 'applied' });
    p.stop();
    expect(out).toContain('\r\u001b[2Kapplying 4/4 changes (100%), 4.0/s, ETA 0s, 1 not applied');
    expect(out.endsWith('\n')).toBe(true);
  });
});
