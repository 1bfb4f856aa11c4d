import { createTask, type Logger as CronLogger, type ScheduledTask } from 'node-cron';
import type { Logger } from '../shared/logger.js';

/** When the daemon runs: a source of ticks. Injected so tests fire ticks instead of waiting 30 minutes. */
export interface Scheduler {
  /** Starts calling `onTick` at each scheduled time. */
  start(onTick: () => void): void;
  /** Stops ticking (a tick already delivered is not recalled). */
  stop(): void;
  /** The next scheduled time, or null when stopped. */
  nextRun(): Date | null;
  /** The usual gap between two scheduled runs (readiness allows a failing streak of twice this). */
  intervalMs(): number;
}

/** Cron schedules through node-cron, read in an IANA time zone. */
export class CronScheduler implements Scheduler {
  private task: ScheduledTask | undefined;
  private readonly probe: ScheduledTask;

  private readonly cronLogger: CronLogger | undefined;

  constructor(
    private readonly expression: string,
    private readonly timezone: string,
    logger?: Logger,
  ) {
    // A stopped task answers getNextRuns() for the interval and the next time without ever firing.
    this.probe = createTask(expression, () => undefined, { timezone });
    // node-cron writes its notices (missed executions) to the console; route them into the JSON log instead.
    this.cronLogger = logger && {
      info: (message) => logger.info({ detail: String(message) }, 'scheduler notice'),
      warn: (message) => logger.warn({ detail: String(message) }, 'scheduler notice'),
      error: (message) => logger.error({ detail: String(message) }, 'scheduler error'),
      debug: (message) => logger.debug({ detail: String(message) }, 'scheduler notice'),
    };
  }

  start(onTick: () => void): void {
    this.stop();
    // noOverlap is not relied on: the daemon itself refuses to start a run while one is running.
    this.task = createTask(this.expression, () => onTick(), { timezone: this.timezone, name: 'orgsync-sync', ...(this.cronLogger ? { logger: this.cronLogger } : {}) });
    void this.task.start();
  }

  stop(): void {
    if (this.task) void this.task.destroy();
    this.task = undefined;
  }

  nextRun(): Date | null {
    return this.task ? this.task.getNextRun() : null;
  }

  intervalMs(): number {
    const [a, b] = this.probe.getNextRuns(2);
    return a && b ? b.getTime() - a.getTime() : 30 * 60_000;
  }
}

/** A scheduler that ticks only when told to (tests, and `orgsync daemon --once`-like harnesses). */
export class ManualScheduler implements Scheduler {
  private onTick: (() => void) | undefined;

  constructor(private readonly interval = 30 * 60_000) {}

  start(onTick: () => void): void {
    this.onTick = onTick;
  }

  stop(): void {
    this.onTick = undefined;
  }

  nextRun(): Date | null {
    return null;
  }

  intervalMs(): number {
    return this.interval;
  }

  /** Delivers one tick, as the schedule would; false when stopped. */
  tick(): boolean {
    if (!this.onTick) return false;
    this.onTick();
    return true;
  }

  /** Whether the daemon is listening for ticks. */
  get started(): boolean {
    return this.onTick !== undefined;
  }
}
