/** The settle stage: after an apply that ran to its end, the trust commit, then the run's result and exit code. */
import { EXIT } from '../../shared/errors.js';
import type { Gate } from './guard.js';
import { partialExitCode, type RunSummary } from './run-state.js';
import type { RunContext } from './start.js';
import { nothingToDo } from './summary.js';

/** Records the trust observation (through the run's writes) and says how the run ended. */
export function settleStage(run: RunContext, gate: Extract<Gate, { kind: 'go' }>, summary: RunSummary): void {
  run.writes.commitTrust(gate.commitTrust);
  const { maxReplanRounds, exitCodeOnQuarantine } = run.settings.settle;
  const failed = summary.failures.length > 0 || summary.notStarted.length > 0 || summary.quarantined.length > 0;
  if (summary.notConverged.length > 0) {
    summary.result = 'failed';
    summary.exitCode = EXIT.FAILED;
    summary.error = `the plan did not converge after ${maxReplanRounds} re-plan round(s): ${summary.notConverged
      .slice(0, 10)
      .map((f) => `${f.entity} ${f.thirdId || f.platformId} (${f.message})`)
      .join('; ')}`;
    run.deps.logger.error({ records: summary.notConverged.map((f) => f.id) }, 'plan did not converge');
  } else if (failed) {
    summary.result = summary.dryRun ? 'dry_run' : 'partial';
    summary.exitCode = partialExitCode(summary, exitCodeOnQuarantine);
  } else {
    summary.result = summary.plan.changes.length === 0 ? nothingToDo(summary) : summary.dryRun ? 'dry_run' : 'applied';
  }
}
