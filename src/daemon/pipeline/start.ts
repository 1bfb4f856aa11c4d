/** The first stage of a run: its options (every stage's settings from the config), observer, writes and clock. */
import { runSettingsFrom, type RunSettings } from './options.js';
import { combineObservers, type RunObserver, type RunOnceDeps, type RunOnceOptions, type RunSummary } from './run-state.js';
import { runWritesFor, type RunWrites } from './writes.js';

/** Where the time of a run went, in ms (RunSummary.phases). */
export type RunPhases = NonNullable<RunSummary['phases']>;

/** What every stage of one run is given: its parts, options and settings, chosen once at its start. */
export interface RunContext {
  deps: RunOnceDeps;
  options: RunOnceOptions;
  settings: RunSettings;
  observer: RunObserver | undefined;
  /** The run's writes to the state DB: real, or none in a dry run. */
  writes: RunWrites;
  /** When the run started (the clock's ms). */
  started: number;
  /** The client's counters at the start (the summary reports the difference). */
  callsAtStart: { requests: number; rateLimited: number };
  phases: RunPhases;
  /** Ends a phase: records the ms since the last lap under `phase`. */
  lap(phase: keyof RunPhases): void;
}

/** Opens a run: settings from the config, the observers combined, the writes chosen, the clock started. */
export function startRun(deps: RunOnceDeps, options: RunOnceOptions): RunContext {
  const started = deps.clock.now();
  const phases: RunPhases = { refreshMs: 0, sourcesMs: 0, planMs: 0, applyMs: 0 };
  let mark = started;
  return {
    deps,
    options,
    settings: runSettingsFrom(deps.config),
    observer: combineObservers(deps.observer, options.observer),
    writes: runWritesFor(deps, options.dryRun === true),
    started,
    callsAtStart: deps.callStats?.() ?? { requests: 0, rateLimited: 0 },
    phases,
    lap(phase) {
      const t = deps.clock.now();
      phases[phase] = t - mark;
      mark = t;
    },
  };
}
