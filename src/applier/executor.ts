/**
 * A dependency-aware executor: runs tasks with bounded concurrency, each once every task it depends on succeeded.
 * A task whose prerequisite did not succeed is skipped (partial apply by dependency); nothing new starts once the
 * stop signal fires or the failure bound is reached, and tasks in flight always finish.
 * Book-keeping is by plan position in typed arrays, so a plan of 100,000 changes costs little memory.
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
  /** Runs one task (`i`: its position); resolves true for success, false for a failure (throwing counts as a failure). */
  run(task: T, i: number): Promise<boolean>;
  /** Called when a task is skipped because `cause` did not succeed. */
  onSkip?(task: T, cause: string, i: number): void;
  /** Stop starting tasks after this many failures. */
  maxFailures?: number;
  /** Stop starting tasks once aborted (in-flight tasks finish). */
  signal?: AbortSignal;
}

const PENDING = 0;
const OK = 1;
const FAILED = 2;
const SKIPPED = 3;
const NAMES: Record<number, TaskStatus> = { [PENDING]: 'not_started', [OK]: 'ok', [FAILED]: 'failed', [SKIPPED]: 'skipped' };

/** Runs `tasks` (a valid sequential order) and returns each task's status, by id. */
export async function runTasks<T extends Task>(tasks: readonly T[], options: ExecutorOptions<T>): Promise<Map<string, TaskStatus>> {
  const statuses = await runTasksIndexed(tasks, options);
  const out = new Map<string, TaskStatus>();
  for (let i = 0; i < tasks.length; i++) out.set(tasks[i]!.id, statuses.at(i));
  return out;
}

/** Each task's status by its position (no map of ids: a plan of 100,000 changes keeps one byte per change). */
export interface TaskStatuses {
  at(i: number): TaskStatus;
}

/**
 * Who waits for whom, by plan position, in compressed rows: the dependents of task `j` are
 * `edges[start[j]] .. edges[start[j + 1] - 1]`, in plan order, and `waiting[i]` counts the prerequisites of task `i`
 * in this run. Typed arrays (4 bytes an edge): a million member creates under 5,000 department creates held one small
 * array per department and a JS number array of a million, tens of MB in a dry run of a million changes.
 */
interface DependencyGraph {
  waiting: Int32Array;
  start: Int32Array;
  edges: Int32Array;
}

/** The prerequisite positions of each task (those inside this run), as a DependencyGraph. */
function dependencyGraph(tasks: readonly Task[]): DependencyGraph {
  const n = tasks.length;
  // Positions of the tasks something depends on (only those: 100,000 member creates need no entry of their own).
  const referenced = new Set<string>();
  for (const t of tasks) for (const d of t.dependsOn) referenced.add(d);
  const index = new Map<string, number>();
  if (referenced.size > 0) tasks.forEach((t, i) => referenced.has(t.id) && index.set(t.id, i));
  referenced.clear();
  const waiting = new Int32Array(n);
  const start = new Int32Array(n + 1);
  let count = 0;
  for (let i = 0; i < n; i++) {
    for (const d of tasks[i]!.dependsOn) {
      const j = index.get(d);
      if (j === undefined) continue; // a prerequisite outside this run (done earlier) does not hold it back
      waiting[i]! += 1;
      start[j + 1]! += 1;
      count += 1;
    }
  }
  for (let j = 1; j <= n; j++) start[j]! += start[j - 1]!;
  const edges = new Int32Array(count);
  // Filled in plan order with start[j] as the cursor of row j (left at the end of the row), then shifted back.
  for (let i = 0; i < n; i++) {
    for (const d of tasks[i]!.dependsOn) {
      const j = index.get(d);
      if (j !== undefined) edges[start[j]!++] = i;
    }
  }
  for (let j = n; j > 0; j--) start[j] = start[j - 1]!;
  start[0] = 0;
  return { waiting, start, edges };
}

/** runTasks, reporting statuses by position. */
export async function runTasksIndexed<T extends Task>(tasks: readonly T[], options: ExecutorOptions<T>): Promise<TaskStatuses> {
  const n = tasks.length;
  const { waiting, start, edges } = dependencyGraph(tasks);
  const state = new Uint8Array(n);
  const started = new Uint8Array(n);
  // Ready tasks leave in plan order (a min-heap of plan positions; each task enters it once at most).
  const ready = new MinHeap(n);
  for (let i = 0; i < n; i++) if (waiting[i] === 0) ready.push(i);
  let failures = 0;
  const maxFailures = options.maxFailures ?? Number.POSITIVE_INFINITY;
  const concurrency = Math.max(1, options.concurrency);
  let inFlight = 0;

  const skip = (from: number, cause: string): void => {
    const stack = [from];
    while (stack.length > 0) {
      const cur = stack.pop()!;
      if (state[cur] !== PENDING || started[cur]) continue;
      state[cur] = SKIPPED;
      options.onSkip?.(tasks[cur]!, cause, cur);
      for (let e = start[cur]!; e < start[cur + 1]!; e++) stack.push(edges[e]!);
    }
  };

  await new Promise<void>((resolveAll) => {
    const pump = (): void => {
      const stopping = options.signal?.aborted === true || failures >= maxFailures;
      while (!stopping && inFlight < concurrency && ready.size > 0) {
        const i = ready.pop();
        if (state[i] !== PENDING || started[i]) continue;
        started[i] = 1;
        inFlight += 1;
        void (async () => {
          let ok = false;
          try {
            ok = await options.run(tasks[i]!, i);
          } catch {
            ok = false;
          }
          inFlight -= 1;
          state[i] = ok ? OK : FAILED;
          if (!ok) failures += 1;
          for (let e = start[i]!; e < start[i + 1]!; e++) {
            const d = edges[e]!;
            if (!ok) skip(d, tasks[i]!.id);
            else if (--waiting[d]! === 0 && state[d] === PENDING) ready.push(d);
          }
          pump();
        })();
      }
      if (inFlight === 0) resolveAll();
    };
    pump();
  });
  return { at: (i) => NAMES[state[i]!]! };
}

/** A binary min-heap of plan positions, in a typed array of a fixed capacity. */
class MinHeap {
  private readonly items: Int32Array;
  size = 0;

  constructor(capacity: number) {
    this.items = new Int32Array(capacity);
  }

  push(v: number): void {
    const a = this.items;
    let i = this.size++;
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
    const last = a[--this.size]!;
    const size = this.size;
    if (size > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= size) break;
        const r = l + 1;
        const c = r < size && a[r]! < a[l]! ? r : l;
        if (a[c]! >= last) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}
