/**
 * Group commit for the state DB. Every state-DB write of the applier (pending creates, mirror outcomes, ownership
 * records) is queued and committed with the others queued in the same turn of the event loop, in ONE transaction:
 * with synchronous=FULL each commit costs an fsync (milliseconds), so one commit per write would cap a sync at a
 * few hundred writes per second whatever the platform allows.
 * `write()` resolves once its transaction has committed; writes marked `lazy` (outcomes that a crash can afford to
 * lose, because the next refresh re-reads them) wait up to `lazyMs` for company, so a commit carries many.
 */

/** Runs a function inside one state-DB transaction (nested calls become savepoints). */
export type RunInTransaction = (fn: () => void) => void;

const NOOP = (): void => undefined;

/** Queues state-DB writes and commits them in groups. */
export class WriteBatcher {
  private queue: { fn: () => void; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private soon = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly inTransaction: RunInTransaction,
    private readonly options: { maxBatch?: number; lazyMs?: number } = {},
  ) {}

  /** Queues `fn`; resolves after the transaction that ran it committed (rejects if it threw). */
  write(fn: () => void, mode: { lazy?: boolean } = {}): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ fn, resolve, reject });
      if (this.queue.length >= (this.options.maxBatch ?? 2000)) this.flushNow();
      else if (!mode.lazy) {
        if (!this.soon) {
          this.soon = true;
          setImmediate(() => this.flushNow());
        }
      } else if (!this.timer && !this.soon) {
        this.timer = setTimeout(() => this.flushNow(), this.options.lazyMs ?? 100);
      }
    });
  }

  /** Commits everything queued so far. */
  async flush(): Promise<void> {
    this.flushNow();
  }

  private flushNow(): void {
    this.soon = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    const failed = new Map<number, unknown>();
    try {
      this.inTransaction(() => {
        batch.forEach((item, i) => {
          try {
            item.fn();
          } catch (err) {
            // One failing write must not undo the others of the group.
            failed.set(i, err);
          }
        });
      });
    } catch (err) {
      batch.forEach((item) => item.reject(err));
      return;
    }
    batch.forEach((item, i) => (failed.has(i) ? item.reject(failed.get(i)) : item.resolve()));
    // Drop every reference the batch held (the writes' closures hold the records they write). A queue entry that V8
    // moved to the old generation while it waited would otherwise keep them alive, as garbage, until a full GC: at
    // thousands of writes a second that was most of an initial sync's peak memory, in some runs (issue 19).
    for (const item of batch) {
      item.fn = NOOP;
      item.resolve = NOOP;
      item.reject = NOOP;
    }
    batch.length = 0;
  }
}
