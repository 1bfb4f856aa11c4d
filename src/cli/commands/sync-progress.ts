/**
 * Progress of an apply: on a terminal a progress line (done/total, rate, ETA) rewritten in place on stderr;
 * otherwise a log line every 5 seconds.
 */
import type { Writable } from 'node:stream';
import type { ChangeResult } from '../../applier/index.js';
import type { RunObserver } from '../../daemon/run-once.js';
import type { Logger } from '../../shared/logger.js';
import { TerminalLine } from '../../observability/terminal-line.js';

/** How often the non-TTY progress log line is written. */
export const PROGRESS_LOG_INTERVAL_MS = 5_000;

/** A progress reporter; `observer` plugs into runOnce, `stop()` ends it. */
export interface ProgressReporter {
  observer: RunObserver;
  stop(): void;
}

function eta(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m` : s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** Builds the reporter; `base` observer hooks (metrics) are called as well. */
export function createProgressReporter(opts: {
  tty: boolean;
  stream: Writable;
  logger: Logger;
  base?: RunObserver;
  now?: () => number;
  /** The terminal's status line, shared with the logger so that log lines are printed above it (TTY only). */
  terminal?: TerminalLine;
  /** The run's id, for the progress log line (non-TTY). */
  runId?: () => string | undefined;
}): ProgressReporter {
  const terminal = opts.tty ? (opts.terminal ?? new TerminalLine(opts.stream)) : undefined;
  const now = opts.now ?? Date.now;
  let total = 0;
  let done = 0;
  let failed = 0;
  let started = 0;
  let timer: NodeJS.Timeout | undefined;
  let lastDraw = 0;
  let stopped = false;
  const line = (): string => {
    const elapsed = (now() - started) / 1000;
    const rate = elapsed > 0 ? done / elapsed : 0;
    return `applying ${done}/${total} changes (${total > 0 ? Math.floor((done * 100) / total) : 100}%), ${rate.toFixed(1)}/s, ETA ${eta(rate > 0 ? (total - done) / rate : Infinity)}${failed ? `, ${failed} not applied` : ''}`;
  };
  const draw = (force = false): void => {
    if (!opts.tty) return;
    const t = now();
    if (!force && t - lastDraw < 100) return;
    lastDraw = t;
    terminal?.set(line());
  };
  const start = (n: number): void => {
    total = n;
    done = 0;
    started = now();
    if (n === 0) return;
    if (opts.tty) draw(true);
    else if (!timer) {
      timer = setInterval(() => {
        const elapsed = (now() - started) / 1000;
        const rate = elapsed > 0 ? done / elapsed : 0;
        const runId = opts.runId?.();
        opts.logger.info({ ...(runId ? { run_id: runId } : {}), done, total, failed, rate_per_second: Math.round(rate * 10) / 10, eta_seconds: rate > 0 ? Math.round((total - done) / rate) : null }, 'sync progress');
      }, PROGRESS_LOG_INTERVAL_MS);
      timer.unref();
    }
  };
  const observer: RunObserver = {
    ...opts.base,
    onApplyStart(n) {
      opts.base?.onApplyStart?.(n);
      start(n);
    },
    onReplan(round, n) {
      opts.base?.onReplan?.(round, n);
      start(n);
    },
    onChangeResult(r: ChangeResult) {
      opts.base?.onChangeResult?.(r);
      done += 1;
      if (r.status !== 'applied' && r.status !== 'adopted') failed += 1;
      draw(done === total);
    },
  };
  return {
    observer,
    stop() {
      if (stopped) return;
      stopped = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      terminal?.done();
    },
  };
}
