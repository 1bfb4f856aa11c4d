/**
 * One `abort` listener per signal, however many wait on it (issue 42 point 4). Every request in flight and every
 * paced wait of a run listens to the run's signal: at `platform.concurrency: 64` that was 64 listeners, and Node
 * printed `MaxListenersExceededWarning: Possible EventTarget memory leak detected` past 10 on every run. The waiters
 * join a set instead; the signal has one listener, which calls them. A waiter leaves the set when it is done.
 */
const waiters = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `fn` once when `signal` aborts (the caller checks `signal.aborted` first); returns how to stop waiting. */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let set = waiters.get(signal);
  if (set === undefined) {
    const created = new Set<() => void>();
    waiters.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        const now = [...created];
        created.clear();
        for (const f of now) f();
      },
      { once: true },
    );
    set = created;
  }
  set.add(fn);
  const joined = set;
  return () => void joined.delete(fn);
}
