/** The read stage: the sources read and turned into the desired state (mapping, merge, validation, quarantine). */
import type { DesiredState } from '../../domain/index.js';
import type { RunOnceDeps } from './run-state.js';

/** Reads the sources into the desired state (stopped by the run's shutdown signal). */
export function readSources(deps: Pick<RunOnceDeps, 'readDesiredState' | 'signal'>): Promise<DesiredState> {
  return deps.readDesiredState(deps.signal);
}
