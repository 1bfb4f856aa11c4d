/**
 * A dependency-aware executor: runs tasks with bounded concurrency, each once every task it depends on succeeded.
 * A task whose prerequisite did not succeed is skipped (partial apply by dependency); nothing new starts once the
 * stop signal fires or the failure bound is reached, and tasks in flight always finish.
 */

/** How one task ended. */
export type TaskStatus = 'ok' | 'failed' | 'skipped' | 'not_started';

/** A task of the executor. */
export interface Task {
  id: string;
  dependsOn: readonly string[];
}

/** Options of runTasks. */
export interface ExecutorOptions<T extends Task> {
  concurrency: number;
  /** Runs one task; resolves true for success, false for a failure (throwing counts as a failure). */
  run(task: T): Promise<boolean>;
  /** Called when a task is skipped because `cause` did not succeed. */
  onSkip?(task: T, cause: string): void;
  /** Stop starting tasks after this many failures. */
  maxFailures?: number;
  /** Stop starting tasks once aborted (in-flight tasks finish). */
  signal?: AbortSignal;
}

/** Runs `tasks` (a valid sequential order) and returns each task's status. */
export async function runTasks<T extends Task>(tasks: readonly T[], options: ExecutorOptions<T>): Promise<Map<string, TaskStatus>> {
  const status = new Map<string, TaskStatus>();
  const byId = new Map<string, T>();
  const waiting = new Map<string, number>();
  const dependents = new Map<string, string[]>();
  for (const t of tasks) byId.set(t.id, t);
  for (const t of tasks) {
    let n = 0;
    for (const d of t.dependsOn) {
      if (!byId.has(d)) continue; // a prerequisite outside this run (e.g. done earlier) does not hold it back
      n += 1;
      const list = dependents.get(d);
      if (list) list.push(t.id);
      else dependents.set(d, [t.id]);
    }
    waiting.set(t.id, n);
  }
  // Ready tasks leave in plan order (a min-heap of plan positions).
  const index = new Map<string, number>();
  tasks.forEach((t, i) => index.set(t.id, i));
  const ready = new MinHeap();
  for (const t of tasks) if (waiting.get(t.id) === 0) ready.push(index.get(t.id)!);
  let failures = 0;
  const maxFailures = options.maxFailures ?? Number.POSITIVE_INFINITY;
  const concurrency = Math.max(1, options.concurrency);
  let inFlight = 0;

  const skip = (id: string, cause: string): void => {
    const stack = [id];
    while (stack.length > 0) {
      const cur = stack.pop()!;
      if (status.has(cur)) continue;
      status.set(cur, 'skipped');
      options.onSkip?.(byId.get(cur)!, cause);
      for (const d of dependents.get(cur) ?? []) stack.push(d);
    }
  };

  await new Promise<void>((resolveAll) => {
    const pump = (): void => {
      const stopping = options.signal?.aborted === true || failures >= maxFailures;
      while (!stopping && inFlight < concurrency && ready.size > 0) {
        const t = tasks[ready.pop()]!;
        if (status.has(t.id)) continue;
        inFlight += 1;
        void (async () => {
          let ok = false;
          try {
            ok = await options.run(t);
          } catch {
            ok = false;
          }
          inFlight -= 1;
          status.set(t.id, ok ? 'ok' : 'failed');
          if (ok) {
            for (const d of dependents.get(t.id) ?? []) {
              const left = waiting.get(d)! - 1;
              waiting.set(d, left);
              if (left === 0 && !status.has(d)) ready.push(index.get(d)!);
            }
          } else {
            failures += 1;
            for (const d of dependents.get(t.id) ?? []) skip(d, t.id);
          }
          pump();
        })();
      }
      if (inFlight === 0) resolveAll();
    };
    pump();
  });
  for (const t of tasks) if (!status.has(t.id)) status.set(t.id, 'not_started');
  return status;
}

/** A binary min-heap of numbers. */
class MinHeap {
  private readonly items: number[] = [];

  get size(): number {
    return this.items.length;
  }

  push(v: number): void {
    const a = this.items;
    a.push(v);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]! <= v) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = v;
  }

  pop(): number {
    const a = this.items;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const r = l + 1;
        const c = r < a.length && a[r]! < a[l]! ? r : l;
        if (a[c]! >= last) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}
